#pragma once
// Small file helpers shared by the caches.
#include <optional>
#include <string>

namespace sdgen {

std::optional<std::string> readFile(const std::string& path);
// Writes through a temporary file and rename, so readers never see a half-written file.
void writeFileAtomic(const std::string& path, const std::string& data);
// A cache file with its checksum beside it (`<path>.sum`, written last): what a later run reads back is exactly
// what was written, or nothing. Cache folders are hostile (a disk error, a half-copied folder, another program):
// SPIR-V, pipeline caches and Slang modules are handed to drivers and compilers that do not all survive a
// corrupt blob. Files over `maxBytes` read as nothing.
void writeFileChecked(const std::string& path, const std::string& data);
std::optional<std::string> readFileChecked(const std::string& path, size_t maxBytes = size_t(1) << 30);
std::string defaultCacheDir();

}  // namespace sdgen
