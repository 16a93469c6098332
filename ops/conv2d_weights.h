#pragma once
// Convolution weights packed once, at load time, into the layouts the conv kernels read (docs/kernels-conv.md):
//   gemm      [kh*kw*Cin, Cout], row k = (ky*kw + kx)*Cin + ci: one row of the implicit GEMM's B matrix, Cout
//             contiguous so a workgroup's loads coalesce and 4 output channels are one aligned vector
//             (General and GemmV2);
//   winograd  U[36, Cin, Cout] = G g G^T per (ci, co) (Winograd F(4,3); the host constructor and host packing
//             compute it in double, the pack kernel in fp32: docs/kernels.md "Weight packing"), ALWAYS fp32:
//             F(4,3)'s output transform amplifies the rounding of U (coefficients up to 8 per axis against a
//             result that cancels), so fp16 U gives errors of a few percent (measured: 3-9% relative) where
//             fp32 U gives about 1e-4 of the output's scale.
//   upsample phases  (fp16 3x3 s1 p1 d1 convolutions whose input is a nearest 2x upsampling: the UNet's and the
//             VAE decoder's upsamplers) P[4 phases][4 taps * Cin][Cout]: each output phase of conv3x3(up2x(x)) as a
//             2x2 convolution of x (ops/conv2d_coop_upsample.cpp), made once from the gemm layout
//             (packUpsamplePhaseFilters) instead of by a launch in every recorded step.
//   winograd rows  (fp16 3x3 s1 p1 d1 convolutions that coop-winograd-rows runs) U[8 products][3 Cin][Cout] =
//             G g per tap column, Winograd F(6,3) along the rows (shaders/conv/winograd_rows.slang; 8/3 of the gemm
//             layout's bytes), made once from the gemm layout (packWinogradRowsFilters) instead of by a launch per
//             call: at allocation (packWinogradRows), or where a recording first runs the algorithm on these
//             weights (winogradRowsOnUse: a model's loader, where only the layers the autotune gives it hold them).
//   winograd F(2,3)  (fp16 3x3 s1 p1 d1 convolutions that coop-winograd runs) U[16 positions][Cin][Cout] = G g G^T
//             (shaders/conv/winograd_f23.slang; 16/9 of the gemm layout's bytes), made by the first recording that
//             runs the algorithm on these weights (winogradF23OnUse) instead of by a launch per call; without it the
//             algorithm makes them into scratch in every call.
// The gemm layout is stored in fp32 or fp16 (`storage`); the bias is always fp32 [Cout] (zeros when absent).
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "engine/memory.h"

namespace sdgen::ops {

class ConvTuner;

struct Conv2dParams {
  int kh = 3, kw = 3;
  int strideH = 1, strideW = 1;
  int padH = 1, padW = 1;
  int dilationH = 1, dilationW = 1;

  // A square kernel with "same"-style padding dilation*(k/2), as in Stable Diffusion.
  static Conv2dParams square(int k, int stride = 1, int dilation = 1) {
    return {k, k, stride, stride, dilation * (k / 2), dilation * (k / 2), dilation, dilation};
  }
  std::string str() const;  // "3x3 s1 p1 d1" (per axis when they differ)
};

// 3x3, stride 1, padding 1, dilation 1: the geometry Winograd F(4,3) computes.
bool isWinogradGeometry(const Conv2dParams& p);

struct Conv2dWeightsOptions {
  DType storage = DType::F32;
  bool packGemm = true;      // General and GemmV2 need it; drop it only when Winograd always runs
  bool packWinograd = true;  // packed only when the geometry is Winograd's (4x the memory of the gemm layout)
  // The upsample phase filters (16/9 of the gemm layout's bytes), beside the gemm layout they are made from: fp16
  // storage, 3x3 s1 p1 d1, Cin and Cout multiples of 8. allocate() leaves them to packUpsamplePhaseFilters.
  bool packUpsamplePhases = false;
  // coop-winograd-rows' filters (8/3 of the gemm layout's bytes), beside the gemm layout they are made from: fp16
  // storage, 3x3 s1 p1 d1, Cin and Cout multiples of 8. allocate() leaves them to packWinogradRowsFilters.
  bool packWinogradRows = false;
  // The same filters made by the first recording that runs coop-winograd-rows on these weights (makeWinogradRows,
  // ops::recordConvCoopWinogradRows) instead of at allocation or per call: what nn::ParameterStore asks for, as the
  // algorithm is chosen per problem (a layer's spatial size) and the load knows only the layer's channels.
  bool winogradRowsOnUse = false;
  // coop-winograd's F(2,3) filters (16/9 of the gemm layout's bytes) made by the first recording that runs the
  // algorithm on these weights (makeWinogradF23, ops::recordConvCoopWinograd), as winogradRowsOnUse and for the
  // same reason; the same conditions.
  bool winogradF23OnUse = false;
  std::string name = "conv2d weights";  // names the allocations and appears in errors
  // The autotune that decided these layouts at load (ops/conv2d_tune.h): ConvAlgo::Auto convolutions with
  // these weights take its measured choice. Null: the rule (docs/dispatch-conv.md).
  ConvTuner* tuner = nullptr;
};

class Conv2dWeights {
 public:
  // `weights`: [Cout, Cin, kh, kw] row-major (the PyTorch layout); `bias`: [Cout], or empty for none.
  // Packed on the host (the reference for the device packing, and for tests and benches that make weights).
  Conv2dWeights(Context& ctx, int cout, int cin, const Conv2dParams& params, std::span<const float> weights,
                std::span<const float> bias, const Conv2dWeightsOptions& options = {});
  // Memory only (the layouts `options` asks for, and the bias), contents undefined: a loader fills it on the
  // device (ops/weight_pack.h, nn::WeightStream).
  static Conv2dWeights allocate(Context& ctx, int cout, int cin, const Conv2dParams& params,
                                const Conv2dWeightsOptions& options = {});

  int cout() const { return cout_; }
  int cin() const { return cin_; }
  const Conv2dParams& params() const { return params_; }
  DType storage() const { return storage_; }
  const std::string& name() const { return name_; }

  bool hasGemm() const { return static_cast<bool>(gemm_); }
  bool hasWinograd() const { return static_cast<bool>(winograd_); }
  const Allocation& gemm() const;      // throws sdgen::Error when not packed
  const Allocation& winograd() const;  // throws sdgen::Error when not packed; always fp32
  bool hasUpsamplePhases() const { return static_cast<bool>(phases_); }
  const Allocation& upsamplePhases() const;  // throws sdgen::Error when not packed; fp16
  bool hasWinogradRows() const { return static_cast<bool>(rows_); }
  const Allocation& winogradRows() const;  // throws sdgen::Error when not packed; fp16
  bool winogradRowsOnUse() const { return rowsOnUse_; }
  // winogradRowsOnUse weights: allocates the coop-winograd-rows filters and runs `pack` to fill them, once (the
  // call that allocates them; a throwing `pack` frees them again). Weights are const where ops read them: the
  // filters are a cache of the gemm layout's contents. Returns whether the weights hold them afterwards.
  bool makeWinogradRows(Context& ctx, const std::function<void(const Allocation&)>& pack) const;
  uint64_t winogradRowsBytes() const { return rows_ ? rows_.size() : 0; }  // 0 where not (yet) made
  // The same for coop-winograd's F(2,3) filters (winogradF23OnUse; fp16 U[16][Cin][Cout]).
  bool hasWinogradF23() const { return static_cast<bool>(f23_); }
  const Allocation& winogradF23() const;  // throws sdgen::Error when not made
  bool winogradF23OnUse() const { return f23OnUse_; }
  bool makeWinogradF23(Context& ctx, const std::function<void(const Allocation&)>& pack) const;
  uint64_t winogradF23Bytes() const { return f23_ ? f23_.size() : 0; }  // 0 where not (yet) made
  // Bytes of the layouts made on first use (coop-winograd-rows' and coop-winograd's filters) held now.
  uint64_t bytesMadeOnUse() const { return (rowsOnUse_ ? winogradRowsBytes() : 0) + winogradF23Bytes(); }
  const Allocation& bias() const { return bias_; }
  ConvTuner* tuner() const { return tuner_; }

 private:
  Conv2dWeights(Context& ctx, int cout, int cin, const Conv2dParams& params, const Conv2dWeightsOptions& options);
  // makeWinogradRows / makeWinogradF23: fp16 [positions][Cin][Cout] into `slot`, once, where `onUse`.
  bool makeOnUse(Allocation& slot, bool onUse, int positions, const char* what, Context& ctx,
                 const std::function<void(const Allocation&)>& pack) const;
  int cout_, cin_;
  Conv2dParams params_;
  DType storage_;
  std::string name_;
  ConvTuner* tuner_ = nullptr;
  bool rowsOnUse_ = false, f23OnUse_ = false;
  Allocation gemm_, winograd_, phases_, bias_;
  mutable Allocation rows_, f23_;                                   // see makeWinogradRows, makeWinogradF23
  // (a unique_ptr keeps the weights movable)
  std::unique_ptr<std::mutex> madeOnUseMutex_ = std::make_unique<std::mutex>();
};

// Host packing (exposed for tests): the gemm layout of [Cout, Cin, kh, kw] weights.
std::vector<float> packGemmLayout(std::span<const float> weights, int cout, int cin, int kh, int kw);
// The upsample phase filters of [Cout, Cin, 3, 3] weights as the device makes them from the fp16 gemm layout (each
// tap rounded to fp16, the same fp32 sums in the same order; the values before their rounding to fp16).
std::vector<float> packUpsamplePhaseLayout(std::span<const float> weights, int cout, int cin);
// Why weights of this shape, geometry and storage cannot hold upsample phase filters (empty: they can).
std::string upsamplePhasesLayoutViolation(int cout, int cin, const Conv2dParams& p, DType storage);
// coop-winograd-rows' filters of [Cout, Cin, 3, 3] weights as the device makes them from the fp16 gemm layout (each
// tap rounded to fp16, the kernel's fp32 sums; the values before their rounding to fp16).
std::vector<float> packWinogradRowsLayout(std::span<const float> weights, int cout, int cin);
// Why weights of this shape, geometry and storage cannot hold coop-winograd-rows' filters (empty: they can).
std::string winogradRowsLayoutViolation(int cout, int cin, const Conv2dParams& p, DType storage);
// ... nor coop-winograd's F(2,3) filters (the same conditions).
std::string winogradF23LayoutViolation(int cout, int cin, const Conv2dParams& p, DType storage);

}  // namespace sdgen::ops
