#pragma once
// sdgen --show-params FILE.png: prints the text chunks of a PNG (sdgen's and webui's "parameters" first, verbatim,
// so it can be copied; then any others as "keyword: text").
#include <cstdio>
#include <string>

namespace sdgen::app {

// Returns the exit code: 0 when the file has text chunks, 1 when it has none. Throws sdgen::Error for a file
// that cannot be read or is not a valid PNG.
int runShowParams(const std::string& path, std::FILE* out, std::FILE* err);

}  // namespace sdgen::app
