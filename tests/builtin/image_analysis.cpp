#include "tests/builtin/image_analysis.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>

namespace sdgen::test {
namespace {

// analysis.py's constants.
constexpr double kForegroundDistance = 60.0;
constexpr int kMinForegroundPixels = 16;
constexpr double kSquareMinFill = 0.88, kCircleMinFill = 0.62;
constexpr int kLargeMinExtent = 17;

// scenes.SHAPE_COLORS
struct NamedColor {
  const char* name;
  double r, g, b;
};
constexpr NamedColor kShapeColors[] = {{"red", 230, 30, 30},   {"orange", 245, 140, 20}, {"yellow", 240, 220, 30},
                                       {"green", 40, 180, 60}, {"blue", 40, 80, 230},    {"purple", 140, 50, 210},
                                       {"pink", 245, 100, 180}};

// numpy's median: the middle value, or the mean of the two middle values.
double median(std::vector<double> v) {
  const size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double hi = v[mid];
  if (n % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + mid) + hi) / 2;
}

// The largest 4-connected component (ties: the first found in row-major order).
std::vector<bool> largestComponent(const std::vector<bool>& mask, int w, int h) {
  std::vector<int> labels(mask.size(), 0);
  int label = 0, bestLabel = 0, bestCount = 0;
  for (int y0 = 0; y0 < h; ++y0)
    for (int x0 = 0; x0 < w; ++x0) {
      if (!mask[y0 * w + x0] || labels[y0 * w + x0]) continue;
      labels[y0 * w + x0] = ++label;
      std::deque<std::pair<int, int>> queue{{y0, x0}};
      int count = 0;
      while (!queue.empty()) {
        auto [y, x] = queue.front();
        queue.pop_front();
        ++count;
        const std::pair<int, int> next[] = {{y - 1, x}, {y + 1, x}, {y, x - 1}, {y, x + 1}};
        for (auto [ny, nx] : next)
          if (ny >= 0 && ny < h && nx >= 0 && nx < w && mask[ny * w + nx] && !labels[ny * w + nx]) {
            labels[ny * w + nx] = label;
            queue.emplace_back(ny, nx);
          }
      }
      if (count > bestCount) bestLabel = label, bestCount = count;
    }
  std::vector<bool> out(mask.size(), false);
  if (bestCount)
    for (size_t i = 0; i < out.size(); ++i) out[i] = labels[i] == bestLabel;
  return out;
}

}  // namespace

double hueDegrees(double r, double g, double b) {
  const double mx = std::max({r, g, b}), mn = std::min({r, g, b}), c = mx - mn;
  if (c == 0) return 0;
  double h;
  if (mx == r) h = std::fmod(std::fmod((g - b) / c, 6.0) + 6.0, 6.0);  // python's % is non-negative
  else if (mx == g) h = (b - r) / c + 2;
  else h = (r - g) / c + 4;
  return std::fmod(60 * h, 360.0);
}

std::string nearestShapeColor(double hue) {
  auto circular = [](double a, double b) {
    const double d = std::fmod(std::abs(a - b), 360.0);
    return std::min(d, 360 - d);
  };
  const NamedColor* best = nullptr;
  double bestDistance = 1e9;
  for (const NamedColor& c : kShapeColors) {
    const double d = circular(hue, hueDegrees(c.r, c.g, c.b));
    if (d < bestDistance) best = &c, bestDistance = d;  // strict: the first of equals, as python's min
  }
  return best->name;
}

ImageAnalysis analyseImage(const std::vector<uint8_t>& rgb, int w, int h) {
  auto at = [&](int x, int y, int c) { return double(rgb[(size_t(y) * w + x) * 3 + c]); };
  ImageAnalysis a;
  // 1. Background: the per-channel median of the outermost pixel ring.
  for (int c = 0; c < 3; ++c) {
    std::vector<double> ring;
    for (int x = 0; x < w; ++x) ring.push_back(at(x, 0, c)), ring.push_back(at(x, h - 1, c));
    for (int y = 1; y < h - 1; ++y) ring.push_back(at(0, y, c)), ring.push_back(at(w - 1, y, c));
    a.background[c] = median(ring);
  }
  // 2. Foreground: far enough from the background; its largest 4-connected component.
  std::vector<bool> mask(size_t(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double d2 = 0;
      for (int c = 0; c < 3; ++c) d2 += (at(x, y, c) - a.background[c]) * (at(x, y, c) - a.background[c]);
      mask[size_t(y) * w + x] = std::sqrt(d2) > kForegroundDistance;
    }
  std::vector<bool> component = largestComponent(mask, w, h);
  std::vector<double> channel[3];
  double sx = 0, sy = 0;
  int x0 = w, x1 = -1, y0 = h, y1 = -1;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (!component[size_t(y) * w + x]) continue;
      ++a.pixels;
      for (int c = 0; c < 3; ++c) channel[c].push_back(at(x, y, c));
      sx += x, sy += y;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  if (a.pixels < kMinForegroundPixels) return a;
  a.found = true;
  // 3. Color: the hue of the component's median color.
  a.hue = hueDegrees(median(channel[0]), median(channel[1]), median(channel[2]));
  a.color = nearestShapeColor(a.hue);
  // 4. Position: the centroid's 3x3 cell.
  const double cx = sx / a.pixels + 0.5, cy = sy / a.pixels + 0.5;
  const int col = std::min(int(3 * cx / w), 2), row = std::min(int(3 * cy / h), 2);
  a.position = 3 * row + col;
  // 5. Shape by how much of its bounding box it fills; 6. size by the box's larger side.
  const int bw = x1 - x0 + 1, bh = y1 - y0 + 1;
  a.fill = double(a.pixels) / double(bw * bh);
  a.shape = a.fill >= kSquareMinFill ? "square" : a.fill >= kCircleMinFill ? "circle" : "triangle";
  a.size = std::max(bw, bh) >= kLargeMinExtent ? "large" : "small";
  return a;
}

}  // namespace sdgen::test
