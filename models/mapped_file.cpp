#include "models/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "engine/error.h"
#include "engine/fault_injection.h"

namespace sdgen::models {

namespace {

[[noreturn]] void throwErrno(const std::string& what, const std::string& path, int err) {
  throw Error("cannot " + what + " '" + path + "': " + std::strerror(err));
}

// Closes the descriptor on every error path out of open(); on success MappedFile takes it over.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

}  // namespace

MappedFile MappedFile::open(const std::string& path) {
  FdGuard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) throwErrno("open", path, errno);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throwErrno("stat", path, errno);
  if (!S_ISREG(st.st_mode)) throw Error("cannot map '" + path + "': not a regular file");
  auto size = static_cast<size_t>(st.st_size);
  if (size == 0) return MappedFile(path, fd.release(), nullptr, 0);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (p == MAP_FAILED) throwErrno("map", path, errno);
  return MappedFile(path, fd.release(), static_cast<const uint8_t*>(p), size);
}

void MappedFile::readAt(uint64_t offset, std::span<uint8_t> out, const std::string& what) const {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n > 0 && injectFault(FaultKind::Read)) {
      n = -1;
      errno = EIO;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("cannot read " + what + " from '" + path_ + "': " + std::strerror(errno));
    if (n == 0)
      throw Error("cannot read " + what + " from '" + path_ + "': the file ends at byte " +
                  std::to_string(offset + done) + ", before byte " + std::to_string(offset + out.size()) +
                  " (truncated or replaced after it was opened)");
    done += static_cast<size_t>(n);
  }
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace sdgen::models
