#include "ops/linear_weights.h"

#include <cstring>
#include <vector>

#include "engine/error.h"

namespace sdgen::ops {

LinearWeights::LinearWeights(Context& ctx, int64_t n, int64_t k, bool bias, DType storage, const std::string& name)
    : n_(n), k_(k), np_((n + 7) / 8 * 8), storage_(storage), name_(name) {
  const std::string what = name + " weights [" + std::to_string(n) + "," + std::to_string(k) + "]";
  if (n <= 0 || k <= 0) throw Error(what + ": sizes must be positive");
  if (k * np_ >= (int64_t(1) << 31)) throw Error(what + ": more than 2^31 packed elements");
  weight_ = ctx.allocate(static_cast<uint64_t>(k * np_) * dtypeSize(storage), what);
  // The bias is tiny; it stays fp32 whatever the weight storage, so it adds no rounding of its own.
  if (bias) bias_ = ctx.allocate(static_cast<uint64_t>(np_) * 4, name + " bias");
}

LinearWeights LinearWeights::allocate(Context& ctx, int64_t n, int64_t k, bool bias, DType storage,
                                      const std::string& name) {
  return LinearWeights(ctx, n, k, bias, storage, name);
}

LinearWeights::LinearWeights(Context& ctx, std::span<const float> weight, int64_t n, int64_t k,
                             std::span<const float> bias, DType storage, const std::string& name)
    : LinearWeights(ctx, n, k, !bias.empty(), storage, name) {
  const std::string what = name + " weights [" + std::to_string(n) + "," + std::to_string(k) + "]";
  if (static_cast<int64_t>(weight.size()) != n * k)
    throw Error(what + ": expected " + std::to_string(n * k) + " values, got " + std::to_string(weight.size()));
  if (!bias.empty() && static_cast<int64_t>(bias.size()) != n)
    throw Error(what + ": bias must have " + std::to_string(n) + " values, got " + std::to_string(bias.size()));

  // Transpose [N][K] -> [K][NP]; the padding columns stay zero so padded loads contribute nothing.
  const size_t count = static_cast<size_t>(k * np_);
  std::vector<uint8_t> bytes(count * dtypeSize(storage), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      size_t dst = static_cast<size_t>(c * np_ + r);
      float v = weight[static_cast<size_t>(r * k + c)];
      if (storage == DType::F16) {
        uint16_t h = floatToHalf(v);
        std::memcpy(bytes.data() + dst * 2, &h, 2);
      } else {
        std::memcpy(bytes.data() + dst * 4, &v, 4);
      }
    }
  ctx.upload(weight_, 0, bytes);

  if (!bias.empty()) {
    std::vector<float> padded(static_cast<size_t>(np_), 0.f);
    std::memcpy(padded.data(), bias.data(), bias.size() * 4);
    ctx.upload(bias_, 0, {reinterpret_cast<const uint8_t*>(padded.data()), padded.size() * 4});
  }
}

std::vector<MemRange> LinearWeights::ranges() const {
  std::vector<MemRange> r = {range(weight_)};
  if (bias_) r.push_back(range(bias_));
  return r;
}

}  // namespace sdgen::ops
