#include "models/resources.h"

#include <cstdlib>

namespace sdgen::models {

std::string resourcePath(const std::string& relative) {
  const char* env = std::getenv("SDGEN_DATA_DIR");
  std::string root = env && *env ? env : SDGEN_SOURCE_DIR;
  return root + "/" + relative;
}

}  // namespace sdgen::models
