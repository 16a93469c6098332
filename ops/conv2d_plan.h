#pragma once
// What a conv2d call runs: the problem's sizes, each algorithm's contract (docs/kernels-conv.md), the GEMM tile
// of the vectorized kernels and the selection rule of ConvAlgo::Auto (docs/dispatch-conv.md).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/device_info.h"
#include "engine/dtype.h"
#include "ops/conv2d_weights.h"

namespace sdgen::ops {

// Coop: implicit GEMM on tensor cores (the cooperative-matrix GEMM of shaders/linear/gemm_coop.slang, fp16).
// Direct: one output pixel per thread for at most 4 output channels (shaders/conv/conv_direct.slang).
// CoopWinograd: Winograd F(2,3) with its 16 GEMMs on tensor cores (shaders/conv/winograd_f23.slang).
// CoopWinogradRows: Winograd F(6,3) along the rows, its 8 products 1x3 convolutions on tensor cores
// (shaders/conv/winograd_rows.slang).
enum class ConvAlgo { Auto, General, GemmV2, Winograd, Coop, Direct, CoopWinograd, CoopWinogradRows };
// "auto", "general", "gemm-v2", "winograd", "coop", "direct", "coop-winograd", "coop-winograd-rows"
const char* convAlgoName(ConvAlgo a);
ConvAlgo parseConvAlgo(const std::string& name);  // throws sdgen::Error listing the valid names

// A workgroup tile of the GEMM core (shaders/conv/gemm_core.slang): BM x BN outputs, TM x TN per thread,
// 256 threads, reduction steps of 16.
// lanes: the CPU variant gemmLanesMain (one 8-lane subgroup per workgroup, BM = 8 TM, BN = 32 CB with CB = tn,
// no shared memory; docs/dispatch-conv.md).
struct ConvTile {
  int bm = 0, bn = 0, tm = 0, tn = 0;
  bool lanes = false;
  bool valid() const { return bm > 0; }
  uint32_t sharedBytes() const { return lanes ? 0 : uint32_t(16 * (bm + bn) * 4); }  // fp32 A and B tiles
  static ConvTile lanesTile(int tm, int cb) { return ConvTile{8 * tm, 32 * cb, tm, cb, true}; }
  std::string str() const;  // "128x128 (8x8 per thread)"
};
// Every tile the kernels are built for, and the one with BM x BN = bm x bn (invalid when none).
const std::vector<ConvTile>& convTiles();
ConvTile findConvTile(int bm, int bn);

// The scratch of Winograd F(4,3)'s band (its fp32 transformed input V and products M): 256 MiB, so the VAE's
// 512^2 and 1024^2 layers in fp32 run in a few bands instead of intermediates of 1-5 GB.
constexpr uint64_t kWinogradBandBytes = uint64_t(256) << 20;

struct ConvProblem {
  int64_t n = 0, h = 0, w = 0, cin = 0, ho = 0, wo = 0, cout = 0;
  Conv2dParams p;
  int64_t m() const { return n * ho * wo; }                  // GEMM rows: output pixels
  int64_t k() const { return int64_t(p.kh) * p.kw * cin; }   // reduction length
  int64_t tilesH() const { return (ho + 3) / 4; }            // Winograd 4x4 output tiles
  int64_t tilesW() const { return (wo + 3) / 4; }
  int64_t tiles() const { return n * tilesH() * tilesW(); }
  int64_t tilesF23() const { return n * ((ho + 1) / 2) * ((wo + 1) / 2); }  // Winograd F(2,3): 2x2 output tiles
  // Winograd F(4,3) runs in bands of tiles whose fp32 V [36, Tb, Cin] and M [36, Tb, Cout] fit
  // kWinogradBandBytes (a multiple of 256 tiles, or every tile where they fit); `forced` > 0 (tests): that many.
  int64_t winogradBandTiles(int64_t forced = 0) const;
  uint64_t winogradScratchBytes(int64_t band) const;         // V and M of a band of `band` tiles
  uint64_t winogradMOffset(int64_t band) const;              // byte offset of M in the scratch (256-aligned)
  std::string str() const;                                   // "[N,H,W,Cin] -> [N,Ho,Wo,Cout] 3x3 s1 p1 d1"
};

struct ConvContext {
  const DeviceInfo& device;
  const Conv2dWeights& weights;
  bool haveScratch = false;
  ConvTile forcedTile;        // invalid: chooseConvTile
  bool inputRawHalf = false;  // the input is a dense fp16 NHWC tensor, 16-byte aligned (Coop reads it raw)
};

// True where the GEMM kernels take their CPU variants (lanes kernels): device type "cpu", subgroup size 8.
bool useCpuGemmKernels(const DeviceInfo& device);
// The tile for `batch` M x N GEMMs (fits the device's shared memory; enough workgroups to fill a large GPU).
ConvTile chooseConvTile(int64_t m, int64_t n, const DeviceInfo& device, int64_t batch = 1);
// The general kernel's tile: 64x64, or 256x16 for at most 16 output channels (4x4 per thread either way).
ConvTile generalConvTile(int64_t cout);
constexpr uint32_t kGeneralConvSharedBytes = 16 * (256 + 64) * 4 + 256 * 16;  // shaders/conv/conv_general.slang

// Empty when `algo` can run the problem; otherwise the first failing condition, as a sentence for errors.
std::string contractViolation(ConvAlgo algo, const ConvProblem& prob, const ConvContext& cc);

// One way to run a problem: an algorithm with its GEMM tile and, on tensor cores, the split-K parts. The
// autotune (ops/conv2d_tune.h) times a problem's candidates (ops/conv2d_candidates.h); Conv2dOptions::candidate
// forces one.
struct ConvCandidate {
  ConvAlgo algo = ConvAlgo::General;
  ConvTile tile;   // GemmV2, Winograd: the GEMM tile; Coop: BM x BN of the tensor-core tile; else unused
  int splitK = 1;  // Coop: K split over this many workgroups per tile
  bool halfAccumulators = false;  // Coop 128x128: fp16 accumulators, each part's K in one fp16 sum (<= 2048)
  bool halo = false;  // Coop: the halo form of a 3x3 stride-1 convolution (GemmTile::haloConv)
  int haloTaps = 1;   // halo: taps per K step, 1 (BK 32) or 3 (BK 16; named "halo3")
  // halo: Winograd F(2,3) along y (GemmTile::haloWinograd; named "halo-f23", BK 16, 3 taps per step)
  bool haloWinograd = false;
  // "coop 64x64 split 4", "coop 128x128", "coop 128x128 f16acc split 2", "coop 128x128 halo", "winograd 64x64",
  // "gemm-v2 32x32 lanes", "general", "direct".
  std::string name() const;
  bool operator==(const ConvCandidate& o) const {
    return algo == o.algo && splitK == o.splitK && tile.bm == o.tile.bm && tile.bn == o.tile.bn &&
           tile.tm == o.tile.tm && tile.tn == o.tile.tn && tile.lanes == o.tile.lanes &&
           halfAccumulators == o.halfAccumulators && halo == o.halo && haloTaps == o.haloTaps &&
           haloWinograd == o.haloWinograd;
  }
};

struct ConvPlan {
  ConvAlgo algo = ConvAlgo::General;
  ConvTile tile;                     // GemmV2 and Winograd
  std::vector<std::string> skipped;  // Auto: "winograd: <condition>" for each better algorithm not taken
  // Set when a candidate was forced or picked by the autotune: its tile (and coop's split-K) replace the rule's.
  std::optional<ConvCandidate> candidate;
  std::string source = "rule";  // "rule", "forced", "tuner" (measured now), "cache" (measured by an earlier run)
};
// Whether Auto runs a convolution with weights in `storage` and these channels on the tensor cores (coop) on
// `device`, whatever the input: then the Winograd filters would never be read and need not be packed.
bool coopConvChosen(const DeviceInfo& device, DType storage, int64_t cin, int64_t cout);

// Auto: the first eligible of Coop, Winograd, GemmV2, General. A forced algorithm whose contract fails throws.
ConvPlan planConv(ConvAlgo requested, const ConvProblem& prob, const ConvContext& cc, const std::string& label);

// --- profiling: what each recorded conv kernel is (sdgen --profile-conv, --bench-conv2d) ---
// Every conv dispatch is labelled "<Conv2dOptions::label> <kernel>", <kernel> being one of "general TILE",
// "gemm-v2 TILE", "winograd input", "winograd gemm TILE", "winograd output" (ops/conv2d_kernels.cpp), TILE being
// "BMxBN" and optional variant words ("32x32 lanes").
// SplitSum: the second launch of a split-K coop GEMM, labelled "coop split-K sum" (ops/linear_gemm.cpp).
// NormTable: a group norm's per-channel scale and shift ("coop affine", "coop-winograd affine", "direct affine":
// ops/conv2d_input_affine.h).
enum class ConvKernelRole { Direct, InputTransform, Gemm, OutputTransform, SplitSum, FilterTransform, NormTable };
// "gemm", "input transform", "gemm", "output transform", "split-K sum", "filter transform", "norm table"
const char* convKernelRoleName(ConvKernelRole r);
struct ConvKernelId {
  ConvAlgo algo = ConvAlgo::General;
  ConvKernelRole role = ConvKernelRole::Direct;
  int bm = 0, bn = 0;  // the GEMM tile; 0 for the Winograd transforms
  std::string tile;    // as labelled ("64x64", "32x32 lanes"); empty for the Winograd transforms
};
// The kernel named at the end of a conv dispatch label (after the conv's own label); nullopt when it is none.
std::optional<ConvKernelId> parseConvKernelLabel(const std::string& kernel);
// The conv's own label and kernel of a full dispatch label; nullopt when the label ends in no conv kernel.
std::optional<std::pair<std::string, ConvKernelId>> splitConvDispatchLabel(const std::string& label);

// Useful arithmetic and minimum memory traffic of one kernel: each tensor read or written once (activations in
// `activations`, gemm weights in `weights`, Winograd U and intermediates fp32). Direct kernels count the conv's
// 2*M*N*K; Winograd's GEMM counts 2*36*T*Cin*Cout (the transformed-domain products it really does) and the
// transforms their matrix products (B^T d B: 2*2*6*6*6 per tile and channel; A^T M A: 2*(4*6*6 + 4*6*4)).
// CoopWinograd (F(2,3), fp16 U and M): the GEMM counts 2*16*T*Cin*Cout (T the 2x2 tiles) and reads the input
// once per batch, the output transform 24 additions per tile and channel, the filter transform 16*Cin*Cout
// values made from the gemm layout. Coop's staged input: the input read, fp16 written; a norm table: the table
// written (N * 2 * Cin fp32; its reads of statistics and gamma/beta uncounted).
struct ConvKernelCost {
  double flops = 0, bytes = 0;
};
ConvKernelCost convKernelCost(const ConvProblem& prob, ConvKernelRole role, DType activations, DType weights,
                              ConvAlgo algo = ConvAlgo::Winograd);
// 2 * N * Ho * Wo * Cout * Cin * kh * kw: the direct convolution's work, the usual basis of TFLOP/s.
double convDirectFlops(const ConvProblem& prob);

}  // namespace sdgen::ops
