#include "ops/conv2d_kernels.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "engine/error.h"
#include "engine/param_block.h"
#include "graph/expr_codegen.h"
#include "ops/conv2d_input_affine.h"
#include "ops/linear_gemm.h"
#include "ops/elementwise.h"

namespace sdgen::ops {

using namespace graph;

namespace {

constexpr int kHeaderWords = 29;  // shaders/conv/conv_common.slang kConvHeaderWords
constexpr int kThreads = 256;     // every conv kernel

const char* storageType(DType t) { return t == DType::F16 ? "F16Storage" : "F32Storage"; }

}  // namespace

ParamBlock convHeader(const ConvProblem& p, VkDeviceAddress weights, VkDeviceAddress bias, VkDeviceAddress v,
                      VkDeviceAddress m, uint32_t gridRow, int outTile) {
  ParamBlock b;
  for (int64_t x : {p.n, p.h, p.w, p.cin, p.ho, p.wo, p.cout}) b.u32(uint32_t(x));
  for (int x : {p.p.kh, p.p.kw, p.p.strideH, p.p.strideW, p.p.padH, p.p.padW, p.p.dilationH, p.p.dilationW})
    b.u32(uint32_t(x));
  b.u32(uint32_t(p.m())).u32(uint32_t(p.k()));
  b.address(weights).address(bias).address(v).address(m);
  const int64_t th = (p.ho + outTile - 1) / outTile, tw = (p.wo + outTile - 1) / outTile;
  b.u32(uint32_t(th)).u32(uint32_t(tw)).u32(uint32_t(p.n * th * tw)).u32(gridRow);
  if (b.size() != kHeaderWords) throw Error("conv2d: parameter header layout mismatch");
  return b;
}

std::string convWrapper(const std::vector<std::string>& modules, const std::string& decls, const std::string& call,
                        int threads) {
  std::string s = "import sdgen;\nimport expr;\nimport conv.conv_common;\n";
  for (auto& m : modules) s += "import " + m + ";\n";
  return s + decls + "[shader(\"compute\")]\n[numthreads(" + std::to_string(threads) + ", 1, 1)]\n"
                     "void main(uint3 group : SV_GroupID, uint3 local : SV_GroupThreadID) {\n  " + call + "\n}\n";
}

namespace {

// Shared memory of one GEMM tile variant, declared in the wrapper so each variant allocates only its own.
std::string gemmSmem(const ConvTile& t) {
  const std::string a = std::to_string(t.bm / 4), b = std::to_string(t.bn / 4);
  return "groupshared float4 gsA[16 * " + a + "];\ngroupshared float4 gsB[16 * " + b + "];\n"
         "struct ConvSmem : IGemmSmem {\n"
         "  static void setA(int k, int m, float v) { gsA[k * " + a + " + (m >> 2)][m & 3] = v; }\n"
         "  static float4 getA4(int k, int mg) { return gsA[k * " + a + " + mg]; }\n"
         "  static void setB4(int k, int ng, float4 v) { gsB[k * " + b + " + ng] = v; }\n"
         "  static float4 getB4(int k, int ng) { return gsB[k * " + b + " + ng]; }\n};\n";
}

std::string tileArgs(const ConvTile& t) {
  return std::to_string(t.bm) + ", " + std::to_string(t.bn) + ", " + std::to_string(t.tm) + ", " +
         std::to_string(t.tn);
}

std::vector<MemRange> concat(std::vector<MemRange> a, const std::vector<MemRange>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

void dispatchConvKernel(const ConvCall& c, const std::string& generated, const std::string& kernel,
                        std::array<uint32_t, 3> groups, const ParamBlock& params, const std::vector<MemRange>& reads,
                        const std::vector<MemRange>& writes, const KernelFeatures& features) {
  KernelSource src;
  src.generated = generated;
  src.defines = features.defines;
  src.capabilities = features.capabilities;
  src.label = "conv2d " + kernel;
  std::string label = c.label + " " + kernel;
  c.seq.dispatch(c.ctx.kernels().request(src), groups, params, reads, writes, label);
  c.info.kernels.push_back(label);
}

std::array<uint32_t, 3> convGrid1d(const DeviceInfo& device, int64_t items) {
  int64_t groups = (items + kThreads - 1) / kThreads;
  int64_t gx = std::min<int64_t>(groups, device.maxWorkgroupCount[0]);
  return {uint32_t(gx), uint32_t((groups + gx - 1) / gx), 1};
}

void dispatchFilterTransform(Context& ctx, CommandSequence& seq, const Conv2dWeights& w, VkDeviceAddress u,
                             const std::string& module, const std::string& entry, int positions, int outTile,
                             const std::string& what, const std::string& label) {
  ConvProblem p;  // what the kernel's header carries: Cin and Cout
  p.n = 1, p.h = p.ho = 1, p.w = p.wo = 1, p.cin = w.cin(), p.cout = w.cout(), p.p = w.params();
  const std::array<uint32_t, 3> grid = convGrid1d(ctx.info(), int64_t(w.cin()) * w.cout() / 4);
  ParamBlock params = convHeader(p, w.gemm().address(), w.bias().address(), u, 0, grid[0], outTile);
  params.u32(0).u32(0);
  KernelSource src;
  src.generated = convWrapper({module}, "", entry);
  src.label = "conv2d " + what + " filter";
  seq.dispatch(ctx.kernels().request(src), grid, params, {{MemRange{w.gemm().address(), w.gemm().size()}}},
               {{MemRange{u, uint64_t(positions) * w.cin() * w.cout() * 2}}}, label);
}

std::array<uint32_t, 3> convGrid1d(const ConvCall& c, int64_t items) { return convGrid1d(c.ctx.info(), items); }

namespace {
MemRange rangeOf(const Allocation& a) { return {a.address(), a.size()}; }
}  // namespace

void recordConvGeneral(const ConvCall& c, const ConvTile& t) {
  const ConvProblem& p = c.prob;
  ParamBlock params = convHeader(p, c.weights.gemm().address(), c.weights.bias().address());
  ExprCodegen gen(params, {false, false});
  std::string e = gen.emit(c.input), s = gen.emit(c.out);
  std::string src = convWrapper({"conv.conv_general"}, "typealias E = " + e + ";\ntypealias S = " + s + ";\n",
                            std::string("convGeneralMain<E, S, ") + storageType(c.weights.storage()) + ", " +
                                std::to_string(t.bn) + ">(group, local);");
  auto reads = concat(rangesOf(tensorsRead(c.input)), rangesOf(tensorsRead(c.out)));
  reads.push_back(rangeOf(c.weights.gemm()));
  reads.push_back(rangeOf(c.weights.bias()));
  dispatchConvKernel(c, src, "general " + std::to_string(t.bm) + "x" + std::to_string(t.bn),
           {uint32_t((p.m() + t.bm - 1) / t.bm), uint32_t((p.cout + t.bn - 1) / t.bn), 1}, params, reads,
           rangesOf(tensorsWritten(c.out)));
}

void recordConvGemmV2(const ConvCall& c, const ConvTile& t) {
  const ConvProblem& p = c.prob;
  ParamBlock params = convHeader(p, c.weights.gemm().address(), c.weights.bias().address());
  ExprCodegen gen(params, {true, false});  // Cin % 4 == 0 and Cout % 4 == 0: eval4 / store4 along channels
  std::string e = gen.emit(c.input), s = gen.emit(c.out);
  c.info.nativeVectorNodes += gen.nativeVectorNodes();
  c.info.scalarWrappedNodes += gen.scalarWrappedNodes();
  const std::string types = "typealias E = " + e + ";\ntypealias S = " + s + ";\n";
  std::string src =
      t.lanes ? convWrapper({"conv.gemm_core", "conv.conv_v2"}, types,
                        std::string("convV2LanesMain<E, S, ") + storageType(c.weights.storage()) + ", " +
                            std::to_string(t.tm) + ", " + std::to_string(t.tn) + ">(group, local);", 8)
              : convWrapper({"conv.gemm_core", "conv.conv_v2"}, types + gemmSmem(t),
                        std::string("convV2Main<E, S, ") + storageType(c.weights.storage()) + ", ConvSmem, " +
                            tileArgs(t) + ">(group, local);");
  auto reads = concat(rangesOf(tensorsRead(c.input)), rangesOf(tensorsRead(c.out)));
  reads.push_back(rangeOf(c.weights.gemm()));
  reads.push_back(rangeOf(c.weights.bias()));
  dispatchConvKernel(c, src, "gemm-v2 " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + (t.lanes ? " lanes" : ""),
           {uint32_t((p.m() + t.bm - 1) / t.bm), uint32_t((p.cout + t.bn - 1) / t.bn), 1}, params, reads,
           rangesOf(tensorsWritten(c.out)));
}

// The direct kernel's halo in fp16 where the weights are (an fp16 model; shaders/conv/conv_direct.slang HALF):
// four workgroups per SM instead of two. SDGEN_CONV_DIRECT_HALF=0 keeps it in fp32 (measurements).
static bool directHalfHalo(DType weights) {
  const char* v = std::getenv("SDGEN_CONV_DIRECT_HALF");
  return weights == DType::F16 && !(v && std::strcmp(v, "0") == 0);
}

// The direct kernel's products on tensor cores (shaders/conv/conv_direct_coop.slang; session 37, measured in session
// 38 on the H200: the VAE's conv_out 0.157 -> 0.131 ms in the bench, 0.176 -> 0.150 in the decode): where the
// weights are fp16 and the device has the cooperative-matrix GEMM's shapes (8 subgroups: 16 x 16 pixels, as the
// CUDA-core kernel). SDGEN_CONV_DIRECT_COOP=0: the CUDA-core kernel; =emulate: software matrices (one subgroup:
// 2 x 16 pixels; tests on devices without them).
static int directCoopSubgroups(const DeviceInfo& device, DType weights) {
  const char* v = std::getenv("SDGEN_CONV_DIRECT_COOP");
  if (weights != DType::F16 || (v && std::strcmp(v, "0") == 0)) return 0;
  if (v && std::strcmp(v, "emulate") == 0) return 1;
  return gemmCoopSupported(device) ? 8 : 0;
}

void recordConvDirect(const ConvCall& c, Conv2dScratch* scratch, int parts) {
  const ConvProblem& p = c.prob;
  if (parts > 1 && !scratch) throw Error(c.label + ": direct split " + std::to_string(parts) + " needs scratch memory");
  // A large group norm input (the VAE's conv_out) through its per-channel table (ops/conv2d_input_affine.h): the
  // halo evaluates silu(x * scale + shift) instead of the statistics per element.
  graph::Expr input = c.input;
  if (scratch && convInputTableWanted(p.n * p.h * p.w * p.cin))
    if (std::optional<ConvInputAffine> affine = convInputAffineOf(c.input)) {
      input = convInputThroughTable(c.ctx, c.seq, *affine, *scratch, c.label + " direct affine");
      c.info.kernels.push_back(c.label + " direct affine");
    }
  // Split over input channels: fp32 partials (a float4 per pixel and part) in the scratch's primary slot -- the
  // partials slot holds the group norm's table above, which the same launch reads.
  MemRange partials{};
  if (parts > 1) {
    const uint64_t bytes = uint64_t(p.n) * uint64_t(parts) * uint64_t(p.ho) * uint64_t(p.wo) * 16;
    partials = range(scratch->acquire(bytes, Conv2dScratch::Slot::Primary), 0, bytes);
  }
  ParamBlock params = convHeader(p, c.weights.gemm().address(), c.weights.bias().address(), partials.address, 0,
                                 uint32_t(parts));
  ExprCodegen gen(params, {true, false});  // Cin % 4 == 0: the halo is read 4 channels at a time
  std::string e = gen.emit(input), s = gen.emit(c.out);
  c.info.nativeVectorNodes += gen.nativeVectorNodes();
  c.info.scalarWrappedNodes += gen.scalarWrappedNodes();
  const int coopSubgroups = directCoopSubgroups(c.ctx.info(), c.weights.storage());
  const int blockRows = coopSubgroups ? 2 * coopSubgroups : 16;
  KernelFeatures features;
  std::string src;
  if (coopSubgroups) {
    src = convWrapper({"conv.conv_direct_coop"}, "typealias E = " + e + ";\ntypealias S = " + s + ";\n",
                      std::string("convDirectCoopMain<E, S, ") + storageType(c.weights.storage()) + ", " +
                          (parts > 1 ? "1" : "0") + ", " + std::to_string(coopSubgroups) + ">(group, local);",
                      32 * coopSubgroups);
    if (coopSubgroups == 1) features.defines = {{"SDGEN_COOP_EMULATION", "1"}};
    else features.capabilities = {"spvCooperativeMatrixKHR"};
  } else {
    src = convWrapper({"conv.conv_direct"}, "typealias E = " + e + ";\ntypealias S = " + s + ";\n",
                      std::string("convDirectMain<E, S, ") + storageType(c.weights.storage()) + ", " +
                          (parts > 1 ? "1" : "0") + ", " + (directHalfHalo(c.weights.storage()) ? "1" : "0") +
                          ">(group, local);");
  }
  const std::string kernel = coopSubgroups ? "direct coop " + std::to_string(blockRows) + "x16" : "direct 16x16";
  auto reads = rangesOf(tensorsRead(input));
  reads.push_back(rangeOf(c.weights.gemm()));
  auto sinkReads = rangesOf(tensorsRead(c.out));
  sinkReads.push_back(rangeOf(c.weights.bias()));
  const std::array<uint32_t, 3> blocks{uint32_t((p.wo + 15) / 16), uint32_t((p.ho + blockRows - 1) / blockRows),
                                       uint32_t(p.n * parts)};
  if (parts == 1) {
    dispatchConvKernel(c, src, kernel, blocks, params, concat(reads, sinkReads), rangesOf(tensorsWritten(c.out)),
                       features);
    return;
  }
  dispatchConvKernel(c, src, kernel + " split " + std::to_string(parts), blocks, params, reads, {partials}, features);
  // The parts' sums, in order, through the sink: one invocation per output pixel.
  std::string sum = convWrapper({"conv.conv_direct"}, "typealias S = " + s + ";\n", "convDirectSumMain<S>(group, local);");
  const int64_t groups = (p.n * p.ho * p.wo + kThreads - 1) / kThreads, gx = std::min<int64_t>(groups, 65535);
  sinkReads.push_back(partials);
  dispatchConvKernel(c, sum, "direct split sum", {uint32_t(gx), uint32_t((groups + gx - 1) / gx), 1}, params, sinkReads,
                     rangesOf(tensorsWritten(c.out)));
}

void recordConvWinograd(const ConvCall& c, const ConvTile& t, Conv2dScratch& scratch, int64_t forcedBand) {
  const ConvProblem& p = c.prob;
  const int64_t tiles = p.tiles(), band = p.winogradBandTiles(forcedBand);
  c.info.scratchBytes = p.winogradScratchBytes(band);
  const Allocation& mem = scratch.acquire(c.info.scratchBytes);
  const VkDeviceAddress v = mem.address(), m = mem.address() + p.winogradMOffset(band);
  const std::string scratchStorage = "F32Storage";
  const Allocation& u = c.weights.winograd();
  // Every band reads and writes the same V and M: the graph's barriers order a band after the one before.
  for (int64_t first = 0; first < tiles; first += band) {
    const int64_t count = std::min(band, tiles - first);
    const MemRange vRange{v, uint64_t(36) * count * p.cin * 4}, mRange{m, uint64_t(36) * count * p.cout * 4};
    auto header = [&](uint32_t gridRow) {
      ParamBlock params = convHeader(p, u.address(), c.weights.bias().address(), v, m, gridRow);
      params.u32(uint32_t(first)).u32(uint32_t(count));  // the band (shaders/conv/winograd.slang)
      return params;
    };
    // The two transforms: one thread per (tile, 4 channels), with the input expression or the sink generated in.
    auto transform = [&](const auto& node, int64_t channels, const std::string& alias, const std::string& main,
                         const std::string& kernel, const std::vector<MemRange>& reads,
                         const std::vector<MemRange>& writes) {
      auto grid = convGrid1d(c, count * channels / 4);
      ParamBlock params = header(grid[0]);
      ExprCodegen gen(params, {true, false});
      const std::string type = gen.emit(node);
      c.info.nativeVectorNodes += gen.nativeVectorNodes();
      c.info.scalarWrappedNodes += gen.scalarWrappedNodes();
      const std::string src =
          convWrapper({"conv.gemm_core", "conv.winograd"}, "typealias " + alias + " = " + type + ";\n",
                      main + "<" + alias + ", " + scratchStorage + ">(winogradItem(group, local));");
      dispatchConvKernel(c, src, kernel, grid, params, reads, writes);
    };
    // 1. input transform: V = B^T d B
    transform(c.input, p.cin, "E", "winogradInputMain", "winograd input", rangesOf(tensorsRead(c.input)), {vRange});
    {  // 2. 36 GEMMs in the transformed domain: M[e] = V[e] U[e]
      ParamBlock params = header(0);
      std::string src =
          t.lanes ? convWrapper({"conv.gemm_core", "conv.winograd"}, "",
                                std::string("winogradGemmLanesMain<") + storageType(DType::F32) + ", " +
                                    scratchStorage + ", " + std::to_string(t.tm) + ", " + std::to_string(t.tn) +
                                    ">(group, local);",
                                8)
                  : convWrapper({"conv.gemm_core", "conv.winograd"}, gemmSmem(t),
                                std::string("winogradGemmMain<") + storageType(DType::F32) + ", " + scratchStorage +
                                    ", ConvSmem, " + tileArgs(t) + ">(group, local);");
      dispatchConvKernel(c, src,
                         "winograd gemm " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + (t.lanes ? " lanes" : ""),
                         {uint32_t((count + t.bm - 1) / t.bm), uint32_t((p.cout + t.bn - 1) / t.bn), 36}, params,
                         {vRange, rangeOf(u)}, {mRange});
    }
    // 3. output transform: Y = A^T M A + bias, through the sink
    std::vector<MemRange> reads = rangesOf(tensorsRead(c.out));
    reads.push_back(mRange);
    reads.push_back(rangeOf(c.weights.bias()));
    transform(c.out, p.cout, "S", "winogradOutputMain", "winograd output", reads, rangesOf(tensorsWritten(c.out)));
  }
}

}  // namespace sdgen::ops
