#include "app/png_reader.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/error.h"

namespace sdgen::app {

std::vector<uint8_t> readFileBytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot read '" + path + "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error("cannot read '" + path + "'");
  return bytes;
}

std::vector<PngText> readPngTexts(const std::string& path) {
  auto bytes = readFileBytes(path);
  return extractPngTexts(parsePngChunks(bytes, path), path);
}

}  // namespace sdgen::app
