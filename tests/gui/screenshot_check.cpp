// Checks a screenshot of sdgen-gui against the image the same run generated:
//   gui_screenshot_check SCREENSHOT.png RESULT.png X Y W H CLI.png [EXPECTED_PARAMETER...]
// (X, Y, W, H: where the window says it drew the image, in screenshot pixels; CLI.png: the same generation made
// by the sdgen command line, or "-".)
// Passes when (1) the result PNG has non-trivial content and its "parameters" text holds every
// EXPECTED_PARAMETER (as the CLI writes them), (2) the screenshot's rectangle, averaged back down to the
// result's size, matches the result within a small tolerance (the window scales with linear filtering) and
// has non-trivial content itself, and (3) the same rectangle shifted by half its size does not match, so the
// match is about where the image is shown, not about a uniform picture; (4) the GUI's PNG has exactly the
// pixels and the parameters text of the command line's for the same settings (one engine, one PNG writer).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/generation_params.h"
#include "app/png_reader.h"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace {

struct Rgb {
  int w = 0, h = 0;
  std::vector<double> px;  // w * h * 3
  double at(int x, int y, int c) const { return px[(size_t(y) * w + x) * 3 + c]; }
};

Rgb load(const char* path) {
  int w = 0, h = 0, n = 0;
  unsigned char* data = stbi_load(path, &w, &h, &n, 3);
  if (!data) {
    std::fprintf(stderr, "cannot decode %s: %s\n", path, stbi_failure_reason());
    std::exit(1);
  }
  Rgb img{w, h, std::vector<double>(data, data + size_t(w) * h * 3)};
  stbi_image_free(data);
  return img;
}

double stddev(const Rgb& img) {
  double sum = 0, sq = 0;
  for (double v : img.px) {
    sum += v;
    sq += v * v;
  }
  const double n = double(img.px.size()), mean = sum / n;
  return std::sqrt(std::max(sq / n - mean * mean, 0.0));
}

// The screenshot's rectangle (x, y, w, h) box-averaged down to out_w x out_h.
Rgb downsample(const Rgb& shot, double x0, double y0, double w, double h, int outW, int outH) {
  Rgb out{outW, outH, std::vector<double>(size_t(outW) * outH * 3, 0.0)};
  for (int oy = 0; oy < outH; ++oy)
    for (int ox = 0; ox < outW; ++ox) {
      const int xa = int(std::floor(x0 + w * ox / outW)), xb = int(std::floor(x0 + w * (ox + 1) / outW));
      const int ya = int(std::floor(y0 + h * oy / outH)), yb = int(std::floor(y0 + h * (oy + 1) / outH));
      double acc[3] = {0, 0, 0};
      int n = 0;
      for (int y = ya; y < std::max(yb, ya + 1); ++y)
        for (int x = xa; x < std::max(xb, xa + 1); ++x) {
          const int cx = std::clamp(x, 0, shot.w - 1), cy = std::clamp(y, 0, shot.h - 1);
          for (int c = 0; c < 3; ++c) acc[c] += shot.at(cx, cy, c);
          ++n;
        }
      for (int c = 0; c < 3; ++c) out.px[(size_t(oy) * outW + ox) * 3 + c] = acc[c] / n;
    }
  return out;
}

double meanAbsDiff(const Rgb& a, const Rgb& b) {
  double d = 0;
  for (size_t i = 0; i < a.px.size(); ++i) d += std::abs(a.px[i] - b.px[i]);
  return d / double(a.px.size());
}

}  // namespace

// --preview SCREENSHOT.png X Y W H: the live preview drawn during the generation has non-trivial content.
int checkPreview(int argc, char** argv) {
  if (argc != 7) return 2;
  const Rgb shot = load(argv[2]);
  const int x = std::atoi(argv[3]), y = std::atoi(argv[4]), w = std::atoi(argv[5]), h = std::atoi(argv[6]);
  if (w <= 0 || h <= 0 || x < 0 || y < 0 || x + w > shot.w || y + h > shot.h) {
    std::printf("FAILED: the preview rectangle lies outside the screenshot\n");
    return 1;
  }
  const double sd = stddev(downsample(shot, x, y, w, h, 32, 32));
  std::printf("%s: the live preview has non-trivial content (std dev %f)\n", sd > 8.0 ? "ok" : "FAILED", sd);
  return sd > 8.0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--preview") return checkPreview(argc, argv);
  if (argc < 8) {
    std::fprintf(stderr, "usage: %s SCREENSHOT.png RESULT.png X Y W H CLI.png|- [EXPECTED_PARAMETER...]\n", argv[0]);
    return 2;
  }
  const Rgb shot = load(argv[1]), result = load(argv[2]);
  const int x = std::atoi(argv[3]), y = std::atoi(argv[4]), w = std::atoi(argv[5]), h = std::atoi(argv[6]);
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
    failures += !ok;
  };

  auto parametersOf = [](const char* path) {
    for (const auto& t : sdgen::app::readPngTexts(path))
      if (t.keyword == sdgen::app::kParametersKeyword) return t.text;
    return std::string();
  };
  const std::string parameters = parametersOf(argv[2]);
  expect(!parameters.empty(), "the result PNG carries a 'parameters' text");
  if (std::string(argv[7]) != "-") {
    const Rgb cli = load(argv[7]);
    expect(cli.w == result.w && cli.h == result.h && cli.px == result.px,
           "the GUI's image has exactly the pixels of the command line's");
    expect(parametersOf(argv[7]) == parameters, "the GUI's parameters text equals the command line's");
  }
  for (int i = 8; i < argc; ++i)
    expect(parameters.find(argv[i]) != std::string::npos, std::string("parameters contain '") + argv[i] + "'");

  const double resultSd = stddev(result);
  expect(resultSd > 8.0, "the generated image has non-trivial content (std dev " + std::to_string(resultSd) + ")");
  const bool inside = w > 0 && h > 0 && x >= 0 && y >= 0 && x + w <= shot.w && y + h <= shot.h;
  expect(inside, "the image rectangle " + std::to_string(w) + "x" + std::to_string(h) + "+" + std::to_string(x) + "+" +
                     std::to_string(y) + " lies inside the " + std::to_string(shot.w) + "x" + std::to_string(shot.h) +
                     " screenshot");
  if (!inside) return 1;
  expect(std::abs(double(w) / h - double(result.w) / result.h) < 0.02,
         "the rectangle has the image's aspect ratio");
  expect(w >= result.w / 4, "the image is shown at a useful size");

  const Rgb shown = downsample(shot, x, y, w, h, result.w, result.h);
  const double shownSd = stddev(shown), diff = meanAbsDiff(shown, result);
  expect(shownSd > 8.0, "the window's image area has non-trivial content (std dev " + std::to_string(shownSd) + ")");
  expect(diff < 10.0, "the window shows the generated image (mean abs difference " + std::to_string(diff) +
                          " of 255, tolerance 10)");
  const double shifted = meanAbsDiff(downsample(shot, x + w / 2.0, y + h / 2.0, w, h, result.w, result.h), result);
  expect(shifted > 2 * diff + 2, "a rectangle shifted by half the image matches clearly worse (" +
                                     std::to_string(shifted) + ")");
  return failures ? 1 : 0;
}
