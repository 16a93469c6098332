#pragma once
// Files sdgen ships next to its sources (the CLIP vocabulary, the built-in model): found under
// $SDGEN_DATA_DIR when set, else under the source tree the binary was built from.
#include <string>

namespace sdgen::models {

// The absolute path of `relative` (e.g. "models/vocab/clip") inside the data directory.
std::string resourcePath(const std::string& relative);

}  // namespace sdgen::models
