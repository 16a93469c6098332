#include "ops/conv2d_winograd_math.h"

#include <algorithm>
#include <thread>

#include "engine/error.h"

namespace sdgen::ops::winograd {

// Rows of G are the filter polynomial evaluated at 0, 1, -1, 2, -2 (scaled by the Lagrange denominators) and
// the leading coefficient at infinity; B^T and A^T follow from the same points. Checked algebraically by
// ConvWinogradMath.* (tests/ops/conv2d_test.cpp).
const std::array<std::array<double, 3>, 6> G = {{
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
}};

const std::array<std::array<double, 6>, 6> BT = {{
    {4, 0, -5, 0, 1, 0},
    {0, -4, -4, 1, 1, 0},
    {0, 4, -4, -1, 1, 0},
    {0, -2, -1, 2, 1, 0},
    {0, 2, -1, -2, 1, 0},
    {0, 4, 0, -5, 0, 1},
}};

const std::array<std::array<double, 6>, 4> AT = {{
    {1, 1, 1, 1, 1, 0},
    {0, 1, -1, 2, -2, 0},
    {0, 1, 1, 4, 4, 0},
    {0, 1, -1, 8, -8, 1},
}};

std::array<double, 36> filterTransform(std::span<const float, 9> g) {
  double gg[6][3];  // G g
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += G[i][k] * g[k * 3 + j];
      gg[i][j] = s;
    }
  std::array<double, 36> u{};  // (G g) G^T
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += gg[i][k] * G[j][k];
      u[i * 6 + j] = s;
    }
  return u;
}

std::vector<float> packFilters(std::span<const float> weights, int cout, int cin) {
  if (weights.size() != size_t(cout) * cin * 9)
    throw Error("winograd filter transform: expected " + std::to_string(size_t(cout) * cin * 9) +
                " weights [Cout, Cin, 3, 3], got " + std::to_string(weights.size()));
  std::vector<float> u(size_t(36) * cin * cout);
  // Input channels split over threads (each element is computed the same way whatever the split, so the bytes do
  // not depend on it); within a thread co runs innermost, so the 36 rows u[e][ci][*] are written in order rather
  // than with a stride of Cout.
  auto transformRange = [&](int ciBegin, int ciEnd) {
    for (int ci = ciBegin; ci < ciEnd; ++ci)
      for (int co = 0; co < cout; ++co) {
        auto t = filterTransform(std::span<const float, 9>(weights.data() + (size_t(co) * cin + ci) * 9, 9));
        for (int e = 0; e < 36; ++e) u[(size_t(e) * cin + ci) * cout + co] = static_cast<float>(t[e]);
      }
  };
  const size_t filters = size_t(cin) * cout;
  const int threads = int(std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, size_t(cin),
                                            filters / 16384 + 1}));
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k)
    pool.emplace_back(transformRange, int(int64_t(cin) * k / threads), int(int64_t(cin) * (k + 1) / threads));
  transformRange(0, int(int64_t(cin) / threads));
  for (std::thread& t : pool) t.join();
  return u;
}

}  // namespace sdgen::ops::winograd
