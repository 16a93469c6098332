#include "models/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "engine/error.h"

namespace sdgen::models {

namespace {

[[noreturn]] void throwErrno(const std::string& what, const std::string& path, int err) {
  throw Error("cannot " + what + " '" + path + "': " + std::strerror(err));
}

// Closes the descriptor on every path out of open(); the mapping stays valid after close.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile MappedFile::open(const std::string& path) {
  FdGuard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) throwErrno("open", path, errno);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throwErrno("stat", path, errno);
  if (!S_ISREG(st.st_mode)) throw Error("cannot map '" + path + "': not a regular file");
  auto size = static_cast<size_t>(st.st_size);
  if (size == 0) return MappedFile(path, nullptr, 0);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (p == MAP_FAILED) throwErrno("map", path, errno);
  return MappedFile(path, static_cast<const uint8_t*>(p), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace sdgen::models
