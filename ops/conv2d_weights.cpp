#include "ops/conv2d_weights.h"

#include "engine/tensor_io.h"

#include "engine/error.h"
#include "ops/conv2d_winograd_math.h"

namespace sdgen::ops {

std::string Conv2dParams::str() const {
  auto pair = [](const char* tag, int a, int b) {
    return std::string(tag) + (a == b ? std::to_string(a) : std::to_string(a) + "," + std::to_string(b));
  };
  std::string k = std::to_string(kh) + "x" + std::to_string(kw);
  return k + " " + pair("s", strideH, strideW) + " " + pair("p", padH, padW) + " " + pair("d", dilationH, dilationW);
}

bool isWinogradGeometry(const Conv2dParams& p) {
  return p.kh == 3 && p.kw == 3 && p.strideH == 1 && p.strideW == 1 && p.padH == 1 && p.padW == 1 &&
         p.dilationH == 1 && p.dilationW == 1;
}

std::vector<float> packGemmLayout(std::span<const float> w, int cout, int cin, int kh, int kw) {
  std::vector<float> out(w.size());
  for (int co = 0; co < cout; ++co)
    for (int ci = 0; ci < cin; ++ci)
      for (int ky = 0; ky < kh; ++ky)
        for (int kx = 0; kx < kw; ++kx) {
          size_t k = (size_t(ky) * kw + kx) * cin + ci;
          out[k * cout + co] = w[((size_t(co) * cin + ci) * kh + ky) * kw + kx];
        }
  return out;
}

Conv2dWeights::Conv2dWeights(Context& ctx, int cout, int cin, const Conv2dParams& p,
                             const Conv2dWeightsOptions& options)
    : cout_(cout), cin_(cin), params_(p), storage_(options.storage), name_(options.name), tuner_(options.tuner) {
  const std::string who = name_ + " (" + p.str() + ")";
  if (cout <= 0 || cin <= 0)
    throw Error(who + ": channel counts must be positive, got Cout " + std::to_string(cout) + ", Cin " +
                std::to_string(cin));
  if (p.kh <= 0 || p.kw <= 0 || p.strideH <= 0 || p.strideW <= 0 || p.dilationH <= 0 || p.dilationW <= 0 ||
      p.padH < 0 || p.padW < 0)
    throw Error(who + ": kernel size, stride and dilation must be positive and padding non-negative");
  const size_t count = size_t(cout) * cin * p.kh * p.kw;
  if (count >= (size_t(1) << 31) / 36)
    throw Error(who + ": " + std::to_string(count) + " weights exceed the 32-bit indexing of the conv kernels");
  if (!options.packGemm && !(options.packWinograd && isWinogradGeometry(p)))
    throw Error(who + ": no layout packed (packGemm is off and the geometry is not Winograd's)");
  if (options.packGemm) gemm_ = ctx.allocate(count * dtypeSize(storage_), name_ + " (gemm layout)");
  if (options.packWinograd && isWinogradGeometry(p))
    winograd_ = ctx.allocate(size_t(36) * cin * cout * 4, name_ + " (winograd U)");
  if (options.packUpsamplePhases) {
    if (std::string why = upsamplePhasesLayoutViolation(cout, cin, p, storage_); !why.empty())
      throw Error(who + ": no upsample phase filters: " + why);
    if (!options.packGemm) throw Error(who + ": the upsample phase filters are made from the gemm layout (packGemm)");
    phases_ = ctx.allocate(size_t(16) * cin * cout * 2, name_ + " (upsample phases)");
  }
  if (options.packWinogradRows) {
    if (std::string why = winogradRowsLayoutViolation(cout, cin, p, storage_); !why.empty())
      throw Error(who + ": no coop-winograd-rows filters: " + why);
    if (!options.packGemm)
      throw Error(who + ": the coop-winograd-rows filters are made from the gemm layout (packGemm)");
    rows_ = ctx.allocate(size_t(24) * cin * cout * 2, name_ + " (winograd rows U)");
  }
  if (options.winogradRowsOnUse && !rows_) {
    if (std::string why = winogradRowsLayoutViolation(cout, cin, p, storage_); !why.empty())
      throw Error(who + ": no coop-winograd-rows filters: " + why);
    if (!options.packGemm)
      throw Error(who + ": the coop-winograd-rows filters are made from the gemm layout (packGemm)");
    rowsOnUse_ = true;
  }
  if (options.winogradF23OnUse) {
    if (std::string why = winogradF23LayoutViolation(cout, cin, p, storage_); !why.empty())
      throw Error(who + ": no coop-winograd filters: " + why);
    if (!options.packGemm) throw Error(who + ": the coop-winograd filters are made from the gemm layout (packGemm)");
    f23OnUse_ = true;
  }
  bias_ = ctx.allocate(size_t(cout) * 4, name_ + " (bias)");
}

Conv2dWeights Conv2dWeights::allocate(Context& ctx, int cout, int cin, const Conv2dParams& params,
                                      const Conv2dWeightsOptions& options) {
  return Conv2dWeights(ctx, cout, cin, params, options);
}

Conv2dWeights::Conv2dWeights(Context& ctx, int cout, int cin, const Conv2dParams& p, std::span<const float> weights,
                             std::span<const float> bias, const Conv2dWeightsOptions& options)
    : Conv2dWeights(ctx, cout, cin, p, options) {
  const std::string who = name_ + " (" + p.str() + ")";
  const size_t expected = size_t(cout) * cin * p.kh * p.kw;
  if (weights.size() != expected)
    throw Error(who + ": expected " + std::to_string(expected) + " weights [Cout, Cin, kh, kw] = [" +
                std::to_string(cout) + "," + std::to_string(cin) + "," + std::to_string(p.kh) + "," +
                std::to_string(p.kw) + "], got " + std::to_string(weights.size()));
  if (!bias.empty() && bias.size() != size_t(cout))
    throw Error(who + ": bias must have Cout = " + std::to_string(cout) + " elements, got " +
                std::to_string(bias.size()));
  if (gemm_) writeFloats(ctx, gemm_, packGemmLayout(weights, cout, cin, p.kh, p.kw), storage_);
  if (winograd_) writeFloats(ctx, winograd_, winograd::packFilters(weights, cout, cin), DType::F32);
  if (phases_) writeFloats(ctx, phases_, packUpsamplePhaseLayout(weights, cout, cin), DType::F16);
  if (rows_) writeFloats(ctx, rows_, packWinogradRowsLayout(weights, cout, cin), DType::F16);
  std::vector<float> b(bias.begin(), bias.end());
  if (b.empty()) b.assign(cout, 0.0f);
  writeFloats(ctx, bias_, b, DType::F32);
}

const Allocation& Conv2dWeights::gemm() const {
  if (!gemm_) throw Error(name_ + ": the gemm layout was not packed (Conv2dWeightsOptions::packGemm)");
  return gemm_;
}

const Allocation& Conv2dWeights::upsamplePhases() const {
  if (!phases_)
    throw Error(name_ + ": the upsample phase filters were not packed (Conv2dWeightsOptions::packUpsamplePhases)");
  return phases_;
}

const Allocation& Conv2dWeights::winogradRows() const {
  if (!rows_)
    throw Error(name_ + ": the coop-winograd-rows filters were not packed (Conv2dWeightsOptions::packWinogradRows)");
  return rows_;
}

bool Conv2dWeights::makeOnUse(Allocation& slot, bool onUse, int positions, const char* what, Context& ctx,
                              const std::function<void(const Allocation&)>& pack) const {
  std::lock_guard lock(*madeOnUseMutex_);
  if (slot || !onUse) return static_cast<bool>(slot);
  Allocation made = ctx.allocate(size_t(positions) * cin_ * cout_ * 2, name_ + " (" + what + ")");
  pack(made);  // a throwing pack frees `made`: the weights hold none
  slot = std::move(made);
  return true;
}

bool Conv2dWeights::makeWinogradRows(Context& ctx, const std::function<void(const Allocation&)>& pack) const {
  return makeOnUse(rows_, rowsOnUse_, 24, "winograd rows U", ctx, pack);
}

const Allocation& Conv2dWeights::winogradF23() const {
  if (!f23_)
    throw Error(name_ + ": the coop-winograd filters were not made (Conv2dWeightsOptions::winogradF23OnUse)");
  return f23_;
}

bool Conv2dWeights::makeWinogradF23(Context& ctx, const std::function<void(const Allocation&)>& pack) const {
  return makeOnUse(f23_, f23OnUse_, 16, "winograd F(2,3) U", ctx, pack);
}

std::string winogradF23LayoutViolation(int cout, int cin, const Conv2dParams& p, DType storage) {
  return upsamplePhasesLayoutViolation(cout, cin, p, storage);  // the same conditions
}

std::string winogradRowsLayoutViolation(int cout, int cin, const Conv2dParams& p, DType storage) {
  return upsamplePhasesLayoutViolation(cout, cin, p, storage);  // the same conditions
}

std::vector<float> packWinogradRowsLayout(std::span<const float> weights, int cout, int cin) {
  // As winogradRowsFilterMain (shaders/conv/winograd_rows.slang; G there: shaders/conv/winograd_rows_matrices.slang):
  // U_e(kx)[ci][co] = sum_ky G[e][ky] g(ky, kx) of the fp16 taps in fp32, at row (e * 3 + kx) * Cin + ci.
  static constexpr float kG[8][3] = {{-1.0f, 0.0f, 0.0f}, {-1.0f, -1.0f, -1.0f}, {-1.0f, 1.0f, -1.0f},
                                     {0.25f, 0.5f, 1.0f},  {0.25f, -0.5f, 1.0f},  {1.0f, 0.5f, 0.25f},
                                     {1.0f, -0.5f, 0.25f}, {0.0f, 0.0f, 1.0f}};
  std::vector<float> out(size_t(24) * cin * cout);
  for (int ci = 0; ci < cin; ++ci)
    for (int co = 0; co < cout; ++co) {
      float g[3][3];
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx)
          g[ky][kx] = roundToStorage(DType::F16, weights[((size_t(co) * cin + ci) * 3 + ky) * 3 + kx]);
      for (int e = 0; e < 8; ++e)
        for (int kx = 0; kx < 3; ++kx)
          out[((size_t(e) * 3 + kx) * cin + ci) * cout + co] =
              kG[e][0] * g[0][kx] + kG[e][1] * g[1][kx] + kG[e][2] * g[2][kx];
    }
  return out;
}

std::string upsamplePhasesLayoutViolation(int cout, int cin, const Conv2dParams& p, DType storage) {
  if (storage != DType::F16) return "they need fp16 storage";
  if (!isWinogradGeometry(p)) return "the geometry " + p.str() + " is not 3x3 s1 p1 d1";
  if (cin % 8 || cout % 8) return "Cin and Cout must be multiples of 8";
  return {};
}

std::vector<float> packUpsamplePhaseLayout(std::span<const float> weights, int cout, int cin) {
  // As shaders/conv/upsample_phases.slang: per (ci, co) the 9 fp16 taps, summed over the filter columns of each
  // (phase column b, tap column tx), then over the rows, in fp32.
  std::vector<float> out(size_t(16) * cin * cout);
  for (int ci = 0; ci < cin; ++ci)
    for (int co = 0; co < cout; ++co) {
      float g[3][3];
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx)
          g[ky][kx] = roundToStorage(DType::F16, weights[((size_t(co) * cin + ci) * 3 + ky) * 3 + kx]);
      for (int j = 0; j < 4; ++j) {  // j = 2b + tx
        float c[3];
        for (int ky = 0; ky < 3; ++ky) {
          const float cols[4] = {g[ky][0], g[ky][1] + g[ky][2], g[ky][0] + g[ky][1], g[ky][2]};
          c[ky] = cols[j];
        }
        const float r[4] = {c[0], c[1] + c[2], c[0] + c[1], c[2]};
        for (int i = 0; i < 4; ++i) {  // i = 2a + ty
          const int p = 2 * (i >> 1) + (j >> 1), t = 2 * (i & 1) + (j & 1);
          out[((size_t(p) * 4 + t) * cin + ci) * cout + co] = r[i];
        }
      }
    }
  return out;
}

const Allocation& Conv2dWeights::winograd() const {
  if (!winograd_)
    throw Error(name_ + ": the Winograd layout was not packed (geometry " + params_.str() +
                (isWinogradGeometry(params_) ? ", Conv2dWeightsOptions::packWinograd off)" : " is not 3x3 s1 p1 d1)"));
  return winograd_;
}

}  // namespace sdgen::ops
