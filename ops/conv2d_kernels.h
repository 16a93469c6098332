#pragma once
// Records the dispatches of each conv algorithm (internal to ops/conv2d.cpp): generates the Slang wrapper that
// specializes shaders/conv/*.slang on the input expression, the sink, the weight storage and the tile, fills
// the parameter block (shaders/conv/conv_common.slang header, then expression and sink parameters) and
// declares the memory each dispatch reads and writes.
#include <array>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "engine/param_block.h"
#include "engine/context.h"
#include "graph/expr.h"
#include "ops/conv2d.h"
#include "ops/conv2d_plan.h"
#include "ops/conv2d_scratch.h"

namespace sdgen::ops {

struct GemmTile;  // ops/linear.h

struct ConvCall {
  Context& ctx;
  CommandSequence& seq;
  const ConvProblem& prob;
  const graph::Expr& input;
  const Conv2dWeights& weights;
  const graph::Sink& out;
  const std::string& label;
  Conv2dInfo& info;  // kernels launched and vector-access counts are appended
};

void recordConvGeneral(const ConvCall& call, const ConvTile& tile);
void recordConvGemmV2(const ConvCall& call, const ConvTile& tile);
// Per band of tiles (ConvProblem::winogradBandTiles(forcedBand)), V at offset 0 of one scratch allocation and M
// at winogradMOffset(band); the bands reuse it, one after the other.
void recordConvWinograd(const ConvCall& call, const ConvTile& tile, Conv2dScratch& scratch, int64_t forcedBand);
// ops/conv2d_coop.cpp: tensor cores; an input that is not a dense fp16 NHWC tensor is staged into `scratch`.
// `candidate`: its tile and split-K; null: the GEMM's tile and split-K rule. A nearest 2x upsampling of a raw
// fp16 tensor is not staged: its four output phases run as 2x2 convolutions (recordConvCoopUpsample).
void recordConvCoop(const ConvCall& call, Conv2dScratch* scratch, const ConvCandidate* candidate);
// ops/conv2d_coop_upsample.cpp: conv3x3(upsample2x(x)) as one GEMM over its four output phases, each a 2x2
// convolution of x (gemm_coop.slang A_MODE 5), reading the weights' phase filters where they hold them
// (Conv2dWeights::hasUpsamplePhases), else after a launch that makes them in `scratch`.
// upsamplePhasesViolation: why it cannot run `call` on `tile` (empty: it can); SDGEN_CONV_UPSAMPLE_PHASES=0
// turns it off (upsamplePhasesEnabled, ops/conv2d.h; measurements).
std::string upsamplePhasesViolation(const ConvCall& call, const GemmTile& tile, const Conv2dScratch* scratch);
void recordConvCoopUpsample(const ConvCall& call, Conv2dScratch* scratch, const GemmTile& tile);
// The phase filters alone: U fp16 [4 phases][4 taps][Cin][Cout] at `u` from the fp16 gemm layout of call.weights
// (shaders/conv/upsample_phases.slang), one launch labelled "<label> coop phase filters".
void recordUpsamplePhaseFilters(const ConvCall& call, VkDeviceAddress u);
// shaders/conv/conv_direct.slang: Cout <= 4, kernels up to 3x3, stride 1, dilation 1, Cin % 4 == 0. `scratch`
// (may be null): where a large group-norm input's per-channel table goes, and the fp32 partials of `parts` > 1
// (the input channels split over that many workgroups per block, summed by a second launch; needs scratch).
void recordConvDirect(const ConvCall& call, Conv2dScratch* scratch, int parts = 1);
bool convInputRawHalf(const graph::Expr& input);
// ops/conv2d_coop_winograd.cpp: Winograd F(2,3) on tensor cores; filters and products in `scratch`, a computed
// input staged there too. `candidate`: its tile; null: coopWinogradGemmTile. `bandTiles` > 0 (tests): the
// tiles per band instead of coopWinogradBandTiles' choice.
void recordConvCoopWinograd(const ConvCall& call, Conv2dScratch& scratch, const ConvCandidate* candidate,
                            int64_t bandTiles = 0);
// ops/conv2d_coop_winograd_rows.cpp: Winograd F(6,3) along the rows on `tile` (an unsplit fp32-accumulator coop
// tile; the halo form runs gemm_coop.slang A_MODE 8, or A_MODE 9 with the output transform in the products GEMM);
// filters, V and the products in `scratch`, a computed input staged there too. `bandRows` > 0 (tests): tile rows per
// band instead of winogradRowsBandRows' choice. `fusedOutput` (tests; halo tiles only): A_MODE 9 or not; unset: yes
// unless SDGEN_WINOGRAD_ROWS_FUSED=0 (measurements).
void recordConvCoopWinogradRows(const ConvCall& call, Conv2dScratch& scratch, const GemmTile& tile,
                                int64_t bandRows = 0, std::optional<bool> fusedOutput = std::nullopt);
// coop-winograd's explicit input transform (its fp16-accumulator tiles): V fp16 [16][count][Cin] = B^T d B of the
// 4x4 patches of tiles [first, first + count) of a raw fp16 NHWC input [N, H, W, Cin] at `input` (Cin % 4 == 0),
// one launch labelled "<label> coop-winograd input transform"; returns that label.
std::string recordWinogradF23Input(Context& ctx, CommandSequence& seq, const ConvProblem& p, VkDeviceAddress input,
                                   const std::vector<MemRange>& inputRanges, VkDeviceAddress v, int64_t first,
                                   int64_t count, const std::string& label);
// The coop algorithms' input: `call.input` itself when it is a dense fp16 NHWC tensor, else staged into the
// primary slot of `scratch` by one elementwise launch labelled "<label> <what> input".
graph::Expr coopConvInput(const ConvCall& call, Conv2dScratch* scratch, const std::string& what);

// Shared by the record functions (ops/conv2d_kernels.cpp): the parameter header of
// shaders/conv/conv_common.slang (its tiles of outTile x outTile outputs: 4 for F(4,3), 2 for F(2,3)), the
// generated entry point, one labelled dispatch appended to call.info.kernels, and a 1-D item space on a 2-D
// grid of 256-thread groups (group.x capped by the device).
ParamBlock convHeader(const ConvProblem& p, VkDeviceAddress weights, VkDeviceAddress bias, VkDeviceAddress v = 0,
                      VkDeviceAddress m = 0, uint32_t gridRow = 0, int outTile = 4);
std::string convWrapper(const std::vector<std::string>& modules, const std::string& decls, const std::string& call,
                        int threads = 256);
// Compiler defines and capabilities of a kernel beyond the plain ones (a tensor-core kernel, or its emulation).
struct KernelFeatures {
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<std::string> capabilities;
};
void dispatchConvKernel(const ConvCall& call, const std::string& generated, const std::string& kernel,
                        std::array<uint32_t, 3> groups, const ParamBlock& params, const std::vector<MemRange>& reads,
                        const std::vector<MemRange>& writes, const KernelFeatures& features = {});
std::array<uint32_t, 3> convGrid1d(const ConvCall& call, int64_t items);
// The same for a launch without a ConvCall (the phase filters made at load): 256 threads per item block.
std::array<uint32_t, 3> convGrid1d(const DeviceInfo& device, int64_t items);
// A Winograd filter transform's launch (coop-winograd's U, coop-winograd-rows'): `entry` (a call on the item of
// (group, local)) of shader module `module`, a thread per (ci, 4 co), from `w`'s fp16 gemm layout into u (fp16
// [positions][Cin][Cout]); `outTile` is the header's tile word. The kernel is "conv2d <what> filter", the launch
// `label`. The callers check their layout's contract first.
void dispatchFilterTransform(Context& ctx, CommandSequence& seq, const Conv2dWeights& w, VkDeviceAddress u,
                             const std::string& module, const std::string& entry, int positions, int outTile,
                             const std::string& what, const std::string& label);

}  // namespace sdgen::ops
