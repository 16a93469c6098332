#pragma once
// Writing a file so that readers see either the old content or the complete new one, never a partial file: the
// bytes go to a temporary file in the same directory, which is flushed to disk and then renamed over `path`.
#include <cstdint>
#include <span>
#include <string>

namespace sdgen::app {

// Throws sdgen::Error naming `path` and the reason. On failure no temporary file is left behind and an existing
// file at `path` is untouched.
void writeFileAtomically(const std::string& path, std::span<const uint8_t> bytes);

// Throws sdgen::Error when the directory that would hold `path` does not exist or is not a writable directory;
// lets a long computation fail before it starts rather than at the end.
void checkOutputDirectory(const std::string& path);

}  // namespace sdgen::app
