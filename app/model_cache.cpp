#include "app/model_cache.h"

#include <filesystem>

namespace sdgen::app {

uint64_t modelFileBytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    const auto size = fs::file_size(path, ec);
    return ec ? 0 : size;
  }
  // A diffusers folder: its components' weight files (a bounded walk: a model folder has a few dozen files).
  constexpr int kMaxFiles = 10000;
  uint64_t total = 0;
  int seen = 0;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end && seen < kMaxFiles; it.increment(ec), ++seen) {
    const auto ext = it->path().extension();
    if (ext != ".safetensors" && ext != ".bin") continue;
    std::error_code e2;
    if (it->is_regular_file(e2)) total += it->file_size(e2);
  }
  return total;
}

}  // namespace sdgen::app
