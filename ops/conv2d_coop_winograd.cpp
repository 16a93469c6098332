// The convolution algorithm "coop-winograd": Winograd F(2,3) (3x3, stride 1, padding 1) with its 16
// transformed-domain GEMMs on tensor cores (shaders/conv/winograd_f23.slang, shaders/linear/gemm_coop.slang
// A_MODE 4). 2x2 output tiles need 16 products per tile and channel pair where the implicit GEMM needs 36:
// 2.25x fewer tensor-core operations, for one more pass over the output (the fp16 products M).
// Per call: the filter transform (U = G g G^T from the fp16 gemm layout, into scratch: the weights keep one
// packed copy), then per band of tiles the GEMM, whose staging makes V = B^T d B from the raw fp16 input, and
// the output transform through the sink. Contract: docs/kernels-conv.md; selection: docs/dispatch-conv.md.
// Its fused form (SDGEN_COOP_WINOGRAD_FUSED, session 38; shaders/conv/conv_winograd_coop.slang) keeps the products
// in the workgroup: after the filter transform, one launch from the input expression to the sink.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <string>

#include "engine/error.h"
#include "graph/expr_codegen.h"
#include "graph/expr_nodes.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_input_affine.h"
#include "ops/conv2d_kernels.h"
#include "ops/elementwise.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

using namespace graph;

CoopWinogradFusedForm coopWinogradFusedKnob(const DeviceInfo& device) {
  const char* v = std::getenv("SDGEN_COOP_WINOGRAD_FUSED");
  if (!v) return {};
  const std::string s = v;
  const char* h = std::getenv("SDGEN_COOP_WINOGRAD_HALF_ACC");
  const bool half = h && std::string(h) == "1";
  if (s == "emulate" || s == "emulate64") return {s == "emulate" ? 32 : 64, true, half};
  if ((s == "1" || s == "64") && gemmCoopSupported(device))
    return {s == "1" ? 32 : 64, false, half && device.hasCoopMatrix(16, 16, 16, "f16", "f16")};
  return {};
}

std::string coopWinogradFusedSharedProblem(const CoopWinogradFusedForm& form, const DeviceInfo& device) {
  const uint64_t bytes = uint64_t(form.sharedWords()) * 16 + (form.emulated ? 2176 : 0);  // coop_emulation.slang's
  if (bytes <= device.sharedMemoryPerWorkgroup) return {};
  return "its fused form of " + std::to_string(form.tiles) + " tiles needs " + std::to_string(bytes) +
         " bytes of shared memory, the device gives a workgroup " + std::to_string(device.sharedMemoryPerWorkgroup);
}

bool coopWinogradFusedFits(const ConvProblem& p) { return p.cin % 16 == 0 && p.cout % 32 == 0; }

std::array<uint32_t, 3> coopWinogradFusedGrid(const ConvProblem& p, const CoopWinogradFusedForm& form) {
  const int64_t tilesH = (p.ho + 1) / 2, tilesW = (p.wo + 1) / 2, rows = std::max(form.tileRows(), 1);
  return {uint32_t((tilesW + 15) / 16), uint32_t((tilesH + rows - 1) / rows), uint32_t(p.n * (p.cout / 32))};
}

int CoopWinogradFusedForm::sharedWords() const {
  const int slices = (2 * tileRows() + 2) * 34 * 2 + subgroups() * 256, epilogue = 4 * 32 * 8;
  return std::max(slices, epilogue);
}

// The fused form (shaders/conv/conv_winograd_coop.slang): the filter transform into the primary slot, a group
// norm input's table (large inputs, as the other tensor-core convs) into the partials slot, then one launch that
// reads the input expression itself and writes Y through the sink.
static void recordFused(const ConvCall& c, Conv2dScratch& scratch, const CoopWinogradFusedForm& form) {
  const ConvProblem& p = c.prob;
  const uint64_t uBytes = uint64_t(16) * p.cin * p.cout * 2;
  const Allocation& mem = scratch.acquire(uBytes, Conv2dScratch::Slot::Primary);
  const MemRange uRange{mem.address(), uBytes};
  const MemRange gemmRange{c.weights.gemm().address(), c.weights.gemm().size()};
  {
    const auto grid = convGrid1d(c, p.cin * p.cout / 4);  // winogradF23FilterMain: a thread per (ci, 4 co)
    ParamBlock params =
        convHeader(p, c.weights.gemm().address(), c.weights.bias().address(), mem.address(), 0, grid[0], 2);
    params.u32(0).u32(0);
    const std::string filter = "winogradF23FilterMain(winogradF23Item(group, local));";
    dispatchConvKernel(c, convWrapper({"conv.winograd_f23"}, "", filter), "coop-winograd filter", grid, params,
                       {gemmRange}, {uRange});
  }
  Expr input = c.input;
  if (convInputTableWanted(p.n * p.h * p.w * p.cin))
    if (std::optional<ConvInputAffine> affine = convInputAffineOf(c.input)) {
      input = convInputThroughTable(c.ctx, c.seq, *affine, scratch, c.label + " coop-winograd affine");
      c.info.kernels.push_back(c.label + " coop-winograd affine");
    }
  const auto grid = coopWinogradFusedGrid(p, form);
  const int subgroups = form.subgroups();
  ParamBlock params = convHeader(p, c.weights.gemm().address(), c.weights.bias().address(), mem.address(), 0, 0, 2);
  ExprCodegen gen(params, {true, false});  // Cin % 16 == 0: the halo reads 4 channels at a time
  const std::string e = gen.emit(input), s = gen.emit(c.out);
  c.info.nativeVectorNodes += gen.nativeVectorNodes();
  c.info.scalarWrappedNodes += gen.scalarWrappedNodes();
  KernelFeatures features;
  if (subgroups == 1) features.defines = {{"SDGEN_COOP_EMULATION", "1"}};
  else features.capabilities = {"spvCooperativeMatrixKHR"};
  if (form.halfAccumulators) features.defines.push_back({"SDGEN_WINOGRAD_HALF_ACC", "1"});
  const std::string src = convWrapper({"conv.conv_winograd_coop"},
                                      "typealias E = " + e + ";\ntypealias S = " + s + ";\n",
                                      "convWinogradCoopMain<E, S, " + std::to_string(form.tileRows()) + ", " +
                                          std::to_string(subgroups) + ", " +
                                          std::to_string(form.sharedWords()) + ">(group, local);",
                                      32 * subgroups);
  std::vector<MemRange> reads = rangesOf(tensorsRead(input));
  for (const MemRange& r : rangesOf(tensorsRead(c.out))) reads.push_back(r);
  reads.push_back(uRange);
  reads.push_back(MemRange{c.weights.bias().address(), c.weights.bias().size()});
  const std::string kernel =
      "coop-winograd fused " + std::to_string(form.tiles) + "x32" + (form.halfAccumulators ? " f16acc" : "");
  dispatchConvKernel(c, src, form.emulated ? kernel + " emulated" : kernel, grid, params, reads,
                     rangesOf(tensorsWritten(c.out)), features);
  c.info.scratchBytes = uBytes;
  // The plan's tile is the unfused form's GEMM tile.
  c.info.tile = "fused " + std::to_string(form.tiles) + "x32" + (form.halfAccumulators ? " f16acc" : "");
}

void recordConvCoopWinograd(const ConvCall& c, Conv2dScratch& scratch, const ConvCandidate* candidate,
                            int64_t bandTiles) {
  const ConvProblem& p = c.prob;
  // The fused form: a candidate that names it, or (forced algorithm, no candidate) the knob where it fits.
  const CoopWinogradFusedForm knob = coopWinogradFusedKnob(c.ctx.info());
  if (candidate && candidate->fused) {
    recordFused(c, scratch, {candidate->tile.bm, knob.emulated, candidate->halfAccumulators});
    return;
  }
  if (!candidate && knob.tiles && coopWinogradFusedFits(p)) {
    recordFused(c, scratch, knob);
    return;
  }
  const Expr in = coopConvInput(c, &scratch, "coop-winograd");
  const GemmTile tile = candidate ? convCoopGemmTile(*candidate) : coopWinogradGemmTile(p);
  if (!tile.bm) throw Error(c.label + ": internal error: no coop-winograd tile");
  const int64_t tilesH = (p.ho + 1) / 2, tilesW = (p.wo + 1) / 2, tiles = p.n * tilesH * tilesW;
  const int64_t band = coopWinogradBandTiles(p, tile.bm, bandTiles);

  // Scratch (the split-K slot: the staged input holds the primary one): U fp16 [16][Cin][Cout], then one band's
  // products M fp16 [16][band][Cout].
  const uint64_t uBytes = (uint64_t(16) * p.cin * p.cout * 2 + 255) / 256 * 256;
  const uint64_t mBytes = uint64_t(16) * band * p.cout * 2;
  const Allocation& mem = scratch.acquire(uBytes + mBytes, Conv2dScratch::Slot::Partials);
  const VkDeviceAddress u = mem.address(), m = mem.address() + uBytes;
  const MemRange uRange{u, uBytes};
  const MemRange gemmRange{c.weights.gemm().address(), c.weights.gemm().size()};
  const MemRange biasRange{c.weights.bias().address(), c.weights.bias().size()};

  {
    const auto grid = convGrid1d(c, p.cin * p.cout / 4);  // winogradF23FilterMain: a thread per (ci, 4 co)
    ParamBlock params = convHeader(p, c.weights.gemm().address(), c.weights.bias().address(), u, m, grid[0], 2);
    params.u32(0).u32(0);
    dispatchConvKernel(c,
                       convWrapper({"conv.winograd_f23"}, "",
                                   "winogradF23FilterMain(winogradF23Item(group, local));"),
                       "coop-winograd filter", grid, params, {gemmRange}, {uRange});
  }
  const std::string tileText = std::to_string(tile.bm) + "x" + std::to_string(tile.bn);
  for (int64_t first = 0; first < tiles; first += band) {
    const int64_t count = std::min(band, tiles - first);
    GemmProblem g;
    g.a = in;
    g.packed = PackedB{u, 0, p.cout, DType::F16, {uRange}};
    g.winograd = GemmWinograd{in.node().tensor.address, p.h, p.w, p.cin, tilesH, tilesW, first, p.cin * p.cout};
    g.out = bufferSink(view(mem, DType::F16, {1, 16, count, p.cout}, uBytes));
    g.m = count;
    g.n = p.cout;
    g.k = p.cin;
    g.batches = 16;
    g.d1 = 16;  // row g = e * count + t sits at (0, e, t) of M's [1, 16, count, Cout]
    g.d2 = count;
    g.tile = tile;
    g.label = c.label + " coop-winograd gemm " + tileText;
    GemmInfo info = recordGemm(c.ctx, c.seq, g);
    c.info.kernels.push_back(g.label);
    c.info.scalarWrappedNodes += info.scalarWrappedNodes;

    const auto grid = convGrid1d(c, count * p.cout / 4);
    ParamBlock params = convHeader(p, c.weights.gemm().address(), c.weights.bias().address(), u, m, grid[0], 2);
    params.u32(uint32_t(first)).u32(uint32_t(count));
    ExprCodegen gen(params, {true, false});
    const std::string s = gen.emit(c.out);
    c.info.nativeVectorNodes += gen.nativeVectorNodes();
    c.info.scalarWrappedNodes += gen.scalarWrappedNodes();
    std::vector<MemRange> reads = rangesOf(tensorsRead(c.out));
    reads.push_back(MemRange{m, uint64_t(16) * count * p.cout * 2});
    reads.push_back(biasRange);
    dispatchConvKernel(c,
                       convWrapper({"conv.winograd_f23"}, "typealias S = " + s + ";\n",
                                   "winogradF23OutputMain<S>(winogradF23Item(group, local));"),
                       "coop-winograd output", grid, params, reads, rangesOf(tensorsWritten(c.out)));
  }
  c.info.scratchBytes = uBytes + mBytes;
}

}  // namespace sdgen::ops
