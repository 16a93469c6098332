#include "models/sampling/exact_float.h"  // first: these must round exactly as NumPy/PyTorch do
#include "models/sampling/numpy_like.h"

#include <cmath>

namespace sdgen::sampling::numpy_like {

std::vector<double> linspace(double start, double stop, int num) {
  std::vector<double> out;
  if (num <= 0) return out;
  if (num == 1) return {start};
  const double step = (stop - start) / static_cast<double>(num - 1);
  out.reserve(num);
  for (int i = 0; i < num; ++i) out.push_back(static_cast<double>(i) * step + start);
  out.back() = stop;
  return out;
}

std::vector<double> arange(double start, double stop, double step) {
  std::vector<double> out;
  const double count = std::ceil((stop - start) / step);
  if (!(count > 0)) return out;
  const double delta = (start + step) - start;
  const auto n = static_cast<int64_t>(count);
  out.reserve(static_cast<size_t>(n));
  out.push_back(start);
  for (int64_t i = 1; i < n; ++i) out.push_back(start + static_cast<double>(i) * delta);
  return out;
}

double roundHalfEven(double v) { return std::nearbyint(v); }  // the default rounding mode rounds halves to even

double interpUnitGrid(double x, const std::vector<double>& fp) {
  const auto last = static_cast<double>(fp.size() - 1);
  if (x >= last) return fp.back();
  if (x <= 0) return fp.front();
  const auto j = static_cast<size_t>(std::floor(x));
  if (static_cast<double>(j) == x) return fp[j];
  const double slope = (fp[j + 1] - fp[j]) / 1.0;
  return slope * (x - static_cast<double>(j)) + fp[j];
}

std::vector<float> torchLinspaceF32(double start, double end, int steps) {
  std::vector<float> out(static_cast<size_t>(steps));
  if (steps <= 0) return out;
  const auto s = static_cast<float>(start), e = static_cast<float>(end);
  if (steps == 1) {
    out[0] = s;
    return out;
  }
  // torch's x86 builds (AVX2/AVX-512 kernels) compile `start + step * i` into one fused multiply-add; checked
  // bit-exact against torch 2.11 for the beta ranges of Stable Diffusion.
  const float step = (e - s) / static_cast<float>(steps - 1);
  const int halfway = steps / 2;
  for (int i = 0; i < steps; ++i) {
    if (i == 0)
      out[i] = s;
    else if (i == steps - 1)
      out[i] = e;
    else if (i < halfway)
      out[i] = std::fma(step, static_cast<float>(i), s);
    else
      out[i] = std::fma(-step, static_cast<float>(steps - i - 1), e);
  }
  return out;
}

}  // namespace sdgen::sampling::numpy_like
