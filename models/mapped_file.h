#pragma once
// A read-only memory mapping of a whole file. Weights are read straight from the page cache: nothing is
// copied until a tensor is converted, and pages never touched are never read from disk.
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
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size) : path_(std::move(path)), data_(data), size_(size) {}
  void release() noexcept;

  std::string path_;
  const uint8_t* data_ = nullptr;  // null for an empty file (mmap cannot map zero bytes)
  size_t size_ = 0;
};

}  // namespace sdgen::models
