#pragma once
// A read-only memory mapping of a whole file, and its descriptor for reads that must survive the file changing
// underneath: a mapping of a file truncated after open() faults (SIGBUS) when a vanished page is touched, while
// readAt() (pread) reports the short read as an error naming the file. Weights streamed to the device take
// readAt(); headers and host reads of small tensors take the mapping. Pages never touched are never read.
#include <cstdint>
#include <span>
#include <string>

namespace sdgen::models {

class MappedFile {
 public:
  // Throws sdgen::Error naming the path when the file cannot be opened or mapped.
  static MappedFile open(const std::string& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  // Copies bytes [offset, offset + out.size()) of the file as it is now into `out`; throws sdgen::Error naming
  // the file and `what` when they cannot all be read (the file shrank since open(), or an I/O error).
  void readAt(uint64_t offset, std::span<uint8_t> out, const std::string& what) const;
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, int fd, const uint8_t* data, size_t size)
      : path_(std::move(path)), fd_(fd), data_(data), size_(size) {}
  void release() noexcept;

  std::string path_;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;  // null for an empty file (mmap cannot map zero bytes)
  size_t size_ = 0;
};

}  // namespace sdgen::models
