#include "fuzz/fuzz_support.h"

#include <fstream>

namespace sdgen::fuzz {

std::string ScratchDir::write(const std::string& name, std::string_view content) const {
  const std::string file = (std::filesystem::path(path_) / name).string();
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(content.data(), std::streamsize(content.size()));
  if (!out) std::abort();
  return file;
}

std::vector<std::string_view> splitInput(std::string_view data, std::string_view sep) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  for (size_t at; (at = data.find(sep, begin)) != std::string_view::npos; begin = at + sep.size())
    parts.push_back(data.substr(begin, at - begin));
  parts.push_back(data.substr(begin));
  return parts;
}

}  // namespace sdgen::fuzz
