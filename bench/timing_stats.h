#pragma once
// Shared by the kernel benchmarks (linear_bench, wg_gemm_bench): the median, p10 and p90 of a run's timings,
// each the nearest-rank sample.
#include <algorithm>
#include <vector>

namespace sdgen::bench {

struct Stats {
  double median, p10, p90;
};

// `v` must not be empty.
inline Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

}  // namespace sdgen::bench
