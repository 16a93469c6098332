#include "app/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "engine/error.h"

namespace sdgen::app {

namespace {

std::string directoryOf(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw Error("cannot write '" + path + "': " + what + ": " + std::strerror(err));
}

// Owns the temporary file until it is renamed: closes and removes it on every early exit.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& finalPath) : finalPath_(finalPath) {
    const auto target = std::filesystem::path(finalPath);
    const std::string dir = directoryOf(finalPath);
    std::random_device rd;
    for (int attempt = 0; attempt < 16; ++attempt) {
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, ".%d.%08x.tmp", static_cast<int>(getpid()), rd());
      path_ = dir + "/." + target.filename().string() + suffix;
      // 0666 lets the umask decide the final permissions, as for any newly created file.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) return;
      if (errno != EEXIST) fail(finalPath_, "cannot create a temporary file in '" + dir + "'", errno);
    }
    fail(finalPath_, "cannot find an unused temporary name in '" + dir + "'", EEXIST);
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty() && !renamed_) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void write(std::span<const uint8_t> bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(finalPath_, "write failed", errno);
      }
      done += static_cast<size_t>(n);
    }
  }

  // fsync, close, rename: after this the file at finalPath is the complete new content.
  void commit() {
    if (::fsync(fd_) != 0) fail(finalPath_, "fsync failed", errno);
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(finalPath_, "close failed", errno);
    if (::rename(path_.c_str(), finalPath_.c_str()) != 0) fail(finalPath_, "rename from '" + path_ + "' failed", errno);
    renamed_ = true;
    // Persist the directory entry too; the data is already safe, so a failure here is not an error.
    int dirFd = ::open(directoryOf(finalPath_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
      ::fsync(dirFd);
      ::close(dirFd);
    }
  }

 private:
  std::string finalPath_, path_;
  int fd_ = -1;
  bool renamed_ = false;
};

}  // namespace

void writeFileAtomically(const std::string& path, std::span<const uint8_t> bytes) {
  if (path.empty()) throw Error("cannot write a file with an empty name");
  TemporaryFile tmp(path);
  tmp.write(bytes);
  tmp.commit();
}

void checkOutputDirectory(const std::string& path) {
  const std::string dir = directoryOf(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) fail(path, "directory '" + dir + "' is not accessible", errno);
  if (!S_ISDIR(st.st_mode)) fail(path, "'" + dir + "' is not a directory", ENOTDIR);
  if (::access(dir.c_str(), W_OK) != 0) fail(path, "directory '" + dir + "' is not writable", errno);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot write '" + path + "': it is a directory");
}

}  // namespace sdgen::app
