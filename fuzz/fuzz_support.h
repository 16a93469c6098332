#pragma once
// Helpers shared by the libFuzzer targets (docs/reliability.md). The parsers under test take paths, so an input
// is written to an anonymous in-memory file (memfd) and handed over as /proc/self/fd/N: no disk traffic and
// nothing left behind. A target passes when every input either parses or throws sdgen::Error (or the parser's
// documented error type); any other exception escaping, a sanitizer report, a leak or a hang is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sdgen::fuzz {

// An in-memory file with the given content, closed on destruction.
class MemFile {
 public:
  explicit MemFile(std::span<const uint8_t> bytes) : fd_(memfd_create("sdgen-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) std::abort();
      done += size_t(n);
    }
  }
  explicit MemFile(std::string_view text) : MemFile(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())) {}
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  ~MemFile() { ::close(fd_); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// A per-process scratch folder for parsers that read a folder (tokenizer folders, sdgen.json). Files are
// rewritten for each input; the folder is removed at exit. It lives in /dev/shm (tmpfs) when that is writable:
// on a disk-backed $TMPDIR an open() that stalls behind other I/O for over a second tripped the 1 s hang bound
// (-timeout=1) of a CI run with no parser at fault.
class ScratchDir {
 public:
  ScratchDir() {
    const bool shm = ::access("/dev/shm", W_OK | X_OK) == 0;
    const std::filesystem::path base = shm ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
    std::string tmpl = (base / "sdgen-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // Empties the folder (so a file of the previous input cannot leak into this one).
  void clear() const {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(path_, ec)) std::filesystem::remove_all(e.path(), ec);
  }
  std::string write(const std::string& name, std::string_view content) const;

 private:
  std::string path_;
};

// Splits `data` at every occurrence of `sep` (the seed corpora join a target's several files with it).
std::vector<std::string_view> splitInput(std::string_view data, std::string_view sep);

inline std::string_view asText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace sdgen::fuzz
