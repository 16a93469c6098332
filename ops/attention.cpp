#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "graph/expr_nodes.h"
#include "ops/conv2d_plan.h"
#include "ops/elementwise.h"

namespace sdgen::ops {

using namespace graph;

static constexpr int kHeaderWords = 20;  // shaders/attention/flash.slang kAttentionHeaderWords
static constexpr double kLog2e = 1.4426950408889634;  // Q is pre-scaled by scale * log2(e): softmax via exp2

// SDGEN_FLASH_SOFTMAX=shared keeps the softmax of the tensor-core attention in shared memory
// (flash_coop.slang) where the accumulator kernel (flash_coop2.slang) would be chosen, =divisible only where
// it needs no key mask (before session 27): developer knobs for comparing them through whole steps
// (docs/dispatch.md).
static std::string accumulatorSoftmaxKnob() {
  const char* v = std::getenv("SDGEN_FLASH_SOFTMAX");
  return v ? v : "";
}

// What the emulated kernels (shaders/coop_emulation.slang) stand in for: a device with every cooperative-matrix
// feature the tensor-core attention kernels use, so that only the shape's own conditions are checked.
static DeviceInfo emulatedCoop2Device() {
  DeviceInfo d;
  d.coopMatrixKHR = true;
  d.coopMatrix2Softmax = true;
  d.shaderFloat16 = true;
  d.subgroupSize = 32;
  d.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f32", "f32", "subgroup"},
                        {16, 16, 16, "f16", "f16", "f16", "f16", "subgroup"}};
  return d;
}

// The accumulator-softmax tile where the engine picks it by itself: the device and the shape allow it
// (flashCoop2UnsupportedReason with the smallest key block), no emulation, and the knob does not forbid it.
static std::optional<FlashCoopTile> defaultAccumulatorSoftmaxTile(const DeviceInfo& dev, const AttentionOptions& options,
                                                                  int64_t d, int64_t sq, int64_t sk) {
  const std::string knob = accumulatorSoftmaxKnob();
  if (options.coopEmulation || knob == "shared" ||
      !flashCoop2UnsupportedReason(dev, options.causal, sk, 16).empty())
    return std::nullopt;
  auto t = chooseFlashCoop2Tile(d, sq, sk, dev.sharedMemoryPerWorkgroup, dev.maxWorkgroupInvocations);
  if (t && t->maskKeys && knob == "divisible") return std::nullopt;
  // SDGEN_ATTENTION_HALF_ACC=1..3: fp16 accumulation of the scores (1), of each block's P V (2) or both (3)
  // (flash_coop2.slang HACC; session 37, unmeasured: measurements only until a device call decides).
  if (const char* h = std::getenv("SDGEN_ATTENTION_HALF_ACC"); t && h && h[0] >= '1' && h[0] <= '3' && !h[1])
    t->halfAccumulate = h[0] - '0';
  // SDGEN_FLASH_SUBGROUPS=4: the tile before session 32 where the rule takes 8 subgroups (4 subgroups of two
  // 16-row tiles from 2048 query rows, of one below) — a developer knob for whole-step comparisons.
  if (const char* sg = std::getenv("SDGEN_FLASH_SUBGROUPS"); t && sg && std::string(sg) == "4" && t->subgroups == 8) {
    int bkv = t->bkv;  // masked: the same block either way; else the old order (no D 64 exception)
    if (!t->maskKeys)
      for (int b : d > 128 ? std::vector<int>{32, 64, 16} : std::vector<int>{64, 32, 16})
        if (sk % b == 0) {
          bkv = b;
          break;
        }
    FlashCoopTile old = makeFlashCoopTile(d, {bkv, sq >= 2048 ? 2 : 1, 4, false, true});
    old.maskKeys = t->maskKeys;
    t = old;
  }
  return t;
}

static std::string wrapperSource(const AttentionInfo& info, int64_t d, bool causal) {
  const FlashTile& t = info.tile;
  auto n = [](int v) { return std::to_string(v); };
  if (info.lanesRowsPerLane > 0)
    return "import sdgen;\nimport expr;\nimport attention.flash_lanes;\n"
           "typealias Q = " + info.qType + ";\ntypealias K = " + info.kType + ";\ntypealias V = " + info.vType +
           ";\ntypealias O = " + info.outType + ";\n[shader(\"compute\")]\n[numthreads(8, 1, 1)]\n"
           "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
           "  flashLanesMain<Q, K, V, O, " + n(int(d)) + ", " + n(info.lanesRowsPerLane) + ", " +
           (causal ? "1" : "0") + ">(group, local);\n}\n";
  return "import sdgen;\nimport expr;\nimport attention.flash;\n"
         "typealias Q = " + info.qType + ";\ntypealias K = " + info.kType + ";\ntypealias V = " + info.vType +
         ";\ntypealias O = " + info.outType + ";\n[shader(\"compute\")]\n[numthreads(" + n(t.threads()) +
         ", 1, 1)]\nvoid main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n"
         "  flashMain<Q, K, V, O, " + n(t.d) + ", " + n(t.c4) + ", " + n(t.c4p) + ", " + n(t.bq) + ", " + n(t.bkv) +
         ", " + n(t.tpr) + ", " + (info.vector ? "1" : "0") + ", " + (causal ? "1" : "0") + ">(group, local);\n}\n";
}

std::optional<RawHalfHeads> rawHalfHeads(const Expr& x) {
  if (x.node().kind != ExprKind::Buffer) return std::nullopt;
  const TensorView& t = x.node().tensor;
  if (t.isInt32 || t.dtype != DType::F16 || t.shape.size() != 4 || t.address % 16 || t.strides[3] != 1 ||
      t.shape[3] % 8)
    return std::nullopt;
  RawHalfHeads r{t.address, t.strides[0], t.strides[1], t.strides[2]};
  // The kernel forms element offsets b·sB + s·sS + h·sH (+ D) in 32-bit integers.
  int64_t last = t.shape[3];
  for (int i = 0; i < 3; ++i) {
    if (t.strides[i] < 0 || t.strides[i] % 8) return std::nullopt;
    last += (t.shape[i] - 1) * t.strides[i];
  }
  if (last >= (int64_t(1) << 31)) return std::nullopt;
  return r;
}

AttentionInfo attention(Context& ctx, CommandSequence& seq, const Expr& q, const Expr& k, const Expr& v,
                        const Sink& out, const AttentionOptions& options) {
  const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape(), &os = out.shape();
  const std::string shapes = "q " + shapeString(qs) + ", k " + shapeString(ks) + ", v " + shapeString(vs) +
                             ", output " + shapeString(os);
  auto fail = [&](const std::string& why) { throw Error(options.label + ": " + why + " (" + shapes + ")"); };
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4 || os.size() != 4)
    fail("q, k, v and the output must be rank 4: [B, S, H, D]");
  if (ks != vs) fail("k and v must have the same shape [B, Sk, H, D]");
  if (ks[0] != qs[0] || ks[2] != qs[2] || ks[3] != qs[3]) fail("k must be [B, Sk, H, D] with q's B, H and D");
  if (os != qs) fail("the output must have q's shape [B, Sq, H, D]");
  if (options.causal && qs[1] != ks[1]) fail("a causal mask needs Sq == Sk");
  const int64_t d = qs[3];
  if (d > kAttentionMaxHeadDim) fail("head dimension above " + std::to_string(kAttentionMaxHeadDim));
  if (numel(qs) >= (int64_t(1) << 31) || numel(ks) >= (int64_t(1) << 31))
    fail("tensors over 2^31 elements are not supported");

  AttentionInfo info;
  const DeviceInfo& dev = ctx.info();
  std::vector<TensorView> inputs = tensorsRead({q, k, v});
  std::vector<TensorView> read = inputs, sinkReads = tensorsRead(out);
  read.insert(read.end(), sinkReads.begin(), sinkReads.end());

  // q, k and v as raw fp16 heads: the tensor-core kernel reads them 16 bytes at a time from row addresses.
  std::optional<RawHalfHeads> rq, rk, rv;
  const bool rawHeads = options.allowRawInputs && (rq = rawHalfHeads(q)) && (rk = rawHalfHeads(k)) &&
                        (rv = rawHalfHeads(v));
  const bool forceCoop = options.coop.value_or(false) || options.coopBlocks || options.coopEmulation;
  if (forceCoop && options.blocks) fail("fp32 kernel blocks and the tensor-core kernel were both requested");
  if (forceCoop && options.coop == false) fail("coop = false contradicts coopBlocks / coopEmulation");
  if (forceCoop) {
    if (!options.coopEmulation && !flashCoopSupported(dev))
      fail("the tensor-core attention kernel was requested, but the device (" + dev.name +
           ") cannot run it: " + flashCoopUnsupportedReason(dev));
    // The emulation's shared scratch (coop_emulation.slang): 2 x 256 + 32 floats.
    const uint32_t extra = options.coopEmulation ? 4 * (2 * 256 + 32) : 0;
    if (options.coopBlocks) {
      info.coopTile = makeFlashCoopTile(d, *options.coopBlocks);
      if (info.coopTile.accumulatorSoftmax) {
        // Emulated: the device needs none of VK_NV_cooperative_matrix2's features, the rest of the contract holds.
        const std::string why = flashCoop2UnsupportedReason(options.coopEmulation ? emulatedCoop2Device() : dev,
                                                            options.causal, ks[1], info.coopTile.bkv);
        if (!why.empty()) fail("the accumulator-softmax attention kernel was requested, but it cannot run here: " + why);
        info.coopTile.maskKeys = ks[1] % info.coopTile.bkv != 0;
      }
    } else if (auto t = defaultAccumulatorSoftmaxTile(dev, options, d, qs[1], ks[1])) {
      info.coopTile = *t;
    } else if (auto t = chooseFlashCoopTile(d, qs[1], dev.sharedMemoryPerWorkgroup - extra,
                                            dev.maxWorkgroupInvocations, options.coopEmulation ? 1 : 4)) {
      info.coopTile = *t;
    } else {
      fail("no tensor-core tile for head dimension " + std::to_string(d) + " fits the device's " +
           std::to_string(dev.sharedMemoryPerWorkgroup) + " bytes of shared memory");
    }
    if (options.coopEmulation && info.coopTile.subgroups != 1)
      fail("the emulated tensor-core kernel needs one subgroup per workgroup (" + info.coopTile.describe() + ")");
    if (info.coopTile.sharedBytes() + extra > dev.sharedMemoryPerWorkgroup ||
        uint32_t(info.coopTile.threads()) > dev.maxWorkgroupInvocations)
      fail("the requested tile (" + info.coopTile.describe() + ") exceeds the device's " +
           std::to_string(dev.sharedMemoryPerWorkgroup) + " bytes of shared memory or " +
           std::to_string(dev.maxWorkgroupInvocations) + " threads");
    info.coopMatrix = true;
  } else if (!options.coop.has_value() && !options.blocks && flashCoopSupported(dev) && !inputs.empty() &&
             (d <= kFlashCoopAutoMaxHeadDim || rawHeads) &&
             std::all_of(inputs.begin(), inputs.end(), [](const TensorView& t) { return t.dtype == DType::F16; })) {
    // Fp16 inputs on a device with tensor cores, where it measured faster (docs/dispatch.md); D beyond the
    // shared memory falls back to the fp32 kernel.
    std::optional<FlashCoopTile> t = defaultAccumulatorSoftmaxTile(dev, options, d, qs[1], ks[1]);
    if (!t) t = chooseFlashCoopTile(d, qs[1], dev.sharedMemoryPerWorkgroup, dev.maxWorkgroupInvocations);
    if (t) {
      info.coopTile = *t;
      info.coopMatrix = true;
    }
  }
  if (info.coopMatrix) {
    // tile chosen above
  } else if (options.blocks) {
    info.tile = makeFlashTile(d, *options.blocks);
    if (info.tile.sharedBytes() > dev.sharedMemoryPerWorkgroup ||
        uint32_t(info.tile.threads()) > dev.maxWorkgroupInvocations)
      fail("the requested tile (" + info.tile.describe() + ") exceeds the device's " +
           std::to_string(dev.sharedMemoryPerWorkgroup) + " bytes of shared memory or " +
           std::to_string(dev.maxWorkgroupInvocations) + " threads");
  } else {
    info.tile = chooseFlashTile(d, dev.sharedMemoryPerWorkgroup, dev.maxWorkgroupInvocations);
    if (options.allowLanes && useCpuGemmKernels(dev)) info.lanesRowsPerLane = flashLanesRowsPerLane(d);
  }
  info.vector = d % 4 == 0;
  const int64_t rowsPerGroup = info.coopMatrix           ? info.coopTile.bq()
                               : info.lanesRowsPerLane > 0 ? 8 * info.lanesRowsPerLane
                                                           : info.tile.bq;
  info.groups = {uint32_t((qs[1] + rowsPerGroup - 1) / rowsPerGroup), uint32_t(qs[2]), uint32_t(qs[0])};
  for (int i = 0; i < 3; ++i)
    if (info.groups[i] > dev.maxWorkgroupCount[i])
      fail("grid axis " + std::to_string(i) + " needs " + std::to_string(info.groups[i]) +
           " workgroups, the device allows " + std::to_string(dev.maxWorkgroupCount[i]));

  const float scale = options.scale.value_or(float(1.0 / std::sqrt(double(d))));
  ParamBlock params;
  params.u32(uint32_t(qs[1])).u32(uint32_t(ks[1])).u32(uint32_t(d)).f32(float(double(scale) * kLog2e));
  if (info.coopMatrix && rawHeads) {
    info.rawInputs = true;
    for (const RawHalfHeads* r : {&*rq, &*rk, &*rv}) params.address(r->address);
    for (const RawHalfHeads* r : {&*rq, &*rk, &*rv})
      params.u32(uint32_t(r->strideB)).u32(uint32_t(r->strideS)).u32(uint32_t(r->strideH));
    params.u32(0);
  } else {
    for (int i = 4; i < kHeaderWords; ++i) params.u32(0);
  }
  if (params.size() != kHeaderWords) throw Error("attention: header layout mismatch");
  // One vector decision for all four trees: they share the innermost axis D.
  ExprCodegen gen(params, {info.vector, false});
  info.qType = gen.emit(q);
  info.kType = gen.emit(k);
  info.vType = gen.emit(v);
  info.outType = gen.emit(out);
  info.scalarWrappedNodes = gen.scalarWrappedNodes();

  KernelSource src;
  src.label = options.label;
  if (info.coopMatrix) {
    src.generated = flashCoopWrapperSource(info.coopTile, info.qType, info.kType, info.vType, info.outType,
                                           info.vector, options.causal, info.rawInputs);
    if (options.coopEmulation)
      src.defines = {{"SDGEN_COOP_EMULATION", "1"}};
    else
      src.capabilities = flashCoopCapabilities(info.coopTile);
  } else {
    src.generated = wrapperSource(info, d, options.causal);
  }
  seq.dispatch(ctx.kernels().request(src), info.groups, params, rangesOf(read), rangesOf(tensorsWritten(out)),
               options.label);
  return info;
}

}  // namespace sdgen::ops
