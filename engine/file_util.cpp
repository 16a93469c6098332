#include "engine/file_util.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/content_hash.h"
#include "engine/error.h"

namespace sdgen {

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFileAtomic(const std::string& path, const std::string& data) {
  static std::atomic<unsigned> counter{0};
  std::filesystem::path p(path);
  std::filesystem::create_directories(p.parent_path());
  std::string tmp = path + ".tmp" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) throw Error("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error("cannot rename " + tmp + " to " + path);
  }
}

void writeFileChecked(const std::string& path, const std::string& data) {
  writeFileAtomic(path, data);
  writeFileAtomic(path + ".sum", hashHex(data));
}

std::optional<std::string> readFileChecked(const std::string& path, size_t maxBytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > maxBytes || std::filesystem::file_size(path + ".sum", ec) != 32 || ec) return std::nullopt;
  std::optional<std::string> data = readFile(path), sum = readFile(path + ".sum");
  if (!data || !sum || hashHex(*data) != *sum) return std::nullopt;
  return data;
}

std::string defaultCacheDir() {
  if (const char* d = std::getenv("SDGEN_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/sdgen";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/sdgen";
  return "/tmp/sdgen-cache";
}

}  // namespace sdgen
