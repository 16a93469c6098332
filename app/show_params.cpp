#include "app/show_params.h"

#include "app/generation_params.h"
#include "app/png_reader.h"

namespace sdgen::app {

int runShowParams(const std::string& path, std::FILE* out, std::FILE* err) {
  auto texts = readPngTexts(path);
  if (texts.empty()) {
    std::fprintf(err, "sdgen: '%s' has no text chunks (no generation parameters)\n", path.c_str());
    return 1;
  }
  for (const auto& t : texts)
    if (t.keyword == kParametersKeyword && !t.compressed) std::fprintf(out, "%s\n", t.text.c_str());
  for (const auto& t : texts) {
    if (t.keyword == kParametersKeyword && !t.compressed) continue;
    if (t.compressed) std::fprintf(out, "%s: (compressed text, not shown)\n", t.keyword.c_str());
    else std::fprintf(out, "%s: %s\n", t.keyword.c_str(), t.text.c_str());
  }
  return 0;
}

}  // namespace sdgen::app
