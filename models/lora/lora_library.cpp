#include "models/lora/lora_library.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iterator>

#include "engine/error.h"

namespace sdgen::lora {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxDepth = 4;            // subfolders searched below --lora-dir
constexpr size_t kMaxEntries = 100000;  // directory entries visited at most (a huge or looping tree)

bool parseFloat(const std::string& s, float& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && std::isfinite(out);
}

// The first NAME.safetensors below `dir`, in sorted order, breadth-first.
std::string searchBelow(const fs::path& dir, const std::string& file) {
  std::vector<fs::path> level = {dir};
  size_t visited = 0;
  for (int depth = 0; depth <= kMaxDepth && !level.empty(); ++depth) {
    std::vector<fs::path> next;
    for (const fs::path& d : level) {
      std::error_code ec;
      std::vector<fs::path> children;
      for (fs::directory_iterator it(d, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
           it.increment(ec)) {
        if (++visited > kMaxEntries) return "";
        children.push_back(it->path());
      }
      std::sort(children.begin(), children.end());
      for (const fs::path& c : children) {
        std::error_code e2;
        if (c.filename() == file && fs::is_regular_file(c, e2)) return c.string();
        if (fs::is_directory(c, e2) && !fs::is_symlink(c, e2)) next.push_back(c);
      }
    }
    level = std::move(next);
  }
  return "";
}

}  // namespace

LoraSpec parseLoraArgument(const std::string& value, const std::string& flag) {
  LoraSpec s;
  s.path = value;
  const size_t colon = value.rfind(':');
  float scale = 1.f;
  if (colon != std::string::npos && parseFloat(value.substr(colon + 1), scale)) {
    s.path = value.substr(0, colon);
    s.unetScale = s.textScale = scale;
  }
  if (s.path.empty()) throw Error(flag + " '" + value + "': no file named");
  return s;
}

std::vector<LoraSpec> parseLoraLines(const std::string& text, const std::string& what) {
  std::vector<LoraSpec> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    size_t first = start, last = end;
    while (first < last && std::isspace(static_cast<unsigned char>(text[first]))) ++first;
    while (last > first && std::isspace(static_cast<unsigned char>(text[last - 1]))) --last;
    if (last > first) out.push_back(parseLoraArgument(text.substr(first, last - first), what));
    start = end + 1;
  }
  return out;
}

std::string LoraLibrary::findByName(const std::string& name, const std::string& tag) const {
  if (dir_.empty())
    throw Error("prompt tag '" + tag + "': no LoRA folder to look '" + name + "' up in (give --lora-dir)");
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos || name == "." || name == "..")
    throw Error("prompt tag '" + tag + "': a LoRA name is a file name without folders, not '" + name + "'");
  const std::string file = name + ".safetensors";
  std::error_code ec;
  const fs::path direct = fs::path(dir_) / file;
  if (fs::is_regular_file(direct, ec)) return direct.string();
  if (!fs::is_directory(dir_, ec)) throw Error("the LoRA folder '" + dir_ + "' is not a folder");
  std::string found = searchBelow(dir_, file);
  if (found.empty()) throw Error("prompt tag '" + tag + "': no " + file + " in the LoRA folder '" + dir_ + "'");
  return found;
}

std::shared_ptr<const LoraFile> LoraLibrary::file(const std::string& path) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  return files_.emplace(path, readLoraFile(path)).first->second;
}

std::vector<LoraChoice> LoraLibrary::choose(const std::vector<LoraSpec>& specs) {
  std::vector<LoraChoice> out;
  for (const LoraSpec& s : specs) out.push_back({file(s.path), s.unetScale, s.textScale});
  return out;
}

void LoraLibrary::keepOnly(const std::vector<const std::vector<LoraSpec>*>& sets) {
  for (auto it = files_.begin(); it != files_.end();) {
    bool used = false;
    for (const auto* set : sets)
      for (const LoraSpec& s : *set) used = used || s.path == it->first;
    it = used ? std::next(it) : files_.erase(it);
  }
}

}  // namespace sdgen::lora
