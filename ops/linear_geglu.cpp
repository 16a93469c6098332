#include "ops/linear_geglu.h"

#include <algorithm>
#include <string>

#include "engine/error.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

bool gegluEpilogueChosen(const DeviceInfo& device, DType storage) {
  return storage == DType::F16 && gemmCoopSupported(device);
}

void interleaveGegluRows(std::vector<float>& weight, std::vector<float>& bias, int64_t inner, int64_t k) {
  if (inner <= 0 || inner % 4 || int64_t(weight.size()) != 2 * inner * k ||
      (!bias.empty() && int64_t(bias.size()) != 2 * inner))
    throw Error("GEGLU interleave: weights [" + std::to_string(weight.size()) + " values] are not [2 x " +
                std::to_string(inner) + ", " + std::to_string(k) + "] with inner % 4 == 0");
  auto source = [&](int64_t row) {  // the original row that interleaved row `row` takes
    const int64_t block = row / 8, i = row % 8;
    return i < 4 ? 4 * block + i : inner + 4 * block + (i - 4);
  };
  std::vector<float> w(weight.size());
  for (int64_t r = 0; r < 2 * inner; ++r)
    std::copy(weight.begin() + source(r) * k, weight.begin() + (source(r) + 1) * k, w.begin() + r * k);
  weight.swap(w);
  if (!bias.empty()) {
    std::vector<float> b(bias.size());
    for (int64_t r = 0; r < 2 * inner; ++r) b[r] = bias[source(r)];
    bias.swap(b);
  }
}

}  // namespace sdgen::ops
