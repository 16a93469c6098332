#pragma once
// Small file helpers shared by the caches.
#include <optional>
#include <string>

namespace sdgen {

std::optional<std::string> readFile(const std::string& path);
// Writes through a temporary file and rename, so readers never see a half-written file.
void writeFileAtomic(const std::string& path, const std::string& data);
std::string defaultCacheDir();

}  // namespace sdgen
