#pragma once
// The candidates of a convolution problem for the autotune (ops/conv2d_tune.h): algorithm x GEMM tile x split-K
// parts among those whose contract holds, a handful per problem (docs/dispatch-conv.md "Autotune"), their
// names as stored in the tuning cache, and the plan that runs one.
#include <optional>
#include <string>
#include <vector>

#include "ops/conv2d_plan.h"
#include "ops/linear.h"

namespace sdgen::ops {

// Parses ConvCandidate::name(); nullopt for anything else (a cache entry written by another version).
std::optional<ConvCandidate> parseConvCandidate(const std::string& name);

// The tensor-core GEMM tile of a coop candidate: 128x128 (8 subgroups of 64x32) or 64x64 (4 of 32x32), BK 32,
// with its split-K parts. Invalid (bm 0) for any other BM x BN.
GemmTile convCoopGemmTile(const ConvCandidate& candidate);

// K per fp16 sum of the fp16-accumulator conv tiles (one chunk per split part; the unsplit 256x256 tile flushes
// each to scratch).
constexpr int64_t kHalfTileChunkK = 2048;
// The unsplit 256x256 fp16-accumulator coop tile `t` past kHalfTileChunkK of `k`: K in the fewest chunks of at most
// that, as even as whole slices allow (2304 -> 2 x 1152, 4608 -> 3 x 1536: each fp16 sum as short as the split
// candidates' parts), each flushed to an fp16 plane of scratch (ACC 3). The chunk length (GemmTile::flushK), or 0
// where `t` does not flush.
int halfTileFlushK(const GemmTile& t, int64_t k);

// The flush interval of a halo candidate's fp16-accumulator tile `t` (GemmTile::haloConv) over `cin` input channels
// (K = 9 Cin): past kHalfTileChunkK, K in the fewest chunks of whole channel slices (9 x BK each: its flushes
// overwrite the staged halo, gemm_coop.slang A_MODE 6) of at most that, as even as the slices allow (256 channels:
// 2 x 1152); 0 where `t` sums all of K in one fp16 chunk, accumulates in fp32 or is a halo-f23 tile (whose fp16
// products candidateViolation bounds instead).
int haloFlushK(const GemmTile& t, int64_t cin);

// CoopWinograd's GEMM tile when no candidate names one: 128x128 where the 16 GEMMs of the first band fill the
// GPU with at least 240 such tiles, else 64x64 (the coop rule's reasoning, ops/gemm_tile_choice.cpp).
GemmTile coopWinogradGemmTile(const ConvProblem& prob);
// CoopWinograd's tiles per band: its fp16 products M [16][Tb][Cout] are held to kCoopWinogradBandBytes of
// scratch, so a 512^2 VAE layer runs in a few bands instead of a 0.5 GB intermediate; a multiple of `bm`
// (whole GEMM tiles) unless one band holds every tile. `forced` > 0 (tests): that many, rounded up to `bm`.
constexpr uint64_t kCoopWinogradBandBytes = uint64_t(128) << 20;
int64_t coopWinogradBandTiles(const ConvProblem& prob, int bm, int64_t forced = 0);

// coop-winograd-rows (ops/conv2d_coop_winograd_rows.cpp): Winograd F(6,3) along the rows, 6 output rows per tile
// row from 8 products, each a 1x3 convolution of the transformed input V on the tensor cores.
constexpr int kWinogradRowsOut = 6, kWinogradRowsProducts = 8;
// Its GEMM tile when no candidate names one: 128x128 fp32 accumulators where Cout is a multiple of 128, else 64x64.
GemmTile coopWinogradRowsGemmTile(const ConvProblem& prob);
// Tile rows of 6 outputs per image, rounded up to the tile's block rows (the halo tile's BM / 16, else 1): the
// layout of V and M, whose rows past the output are computed and dropped.
int64_t winogradRowsBlockRows(const GemmTile& tile);
int64_t winogradRowsTileRows(const ConvProblem& prob, const GemmTile& tile);
// Tile rows per band: V [8][N][Tb][W][Cin] and M [8][N][Tb][W][Cout] each within kWinogradRowsBandBytes, in bands
// of even size, a multiple of the block rows; `forced` > 0 (tests): that many, rounded up to the block rows.
// 96 MiB (session 52; 192 in sessions 50-51): a 512^2 layer of 256 channels runs in two bands of 48 + 40 tile rows
// (V 96 MiB): on the H100 0.808 ms against 0.776 in one band (each band's GEMM ends in a partial wave), but 120 MiB
// less scratch at SD 1.5's peak, which one band had taken over issue 18's 3 GB bar (3114 MiB with 264 MiB of
// rows V + M); the 256^2 layers (512 channels in: 2 MiB per tile row, 44 rows) still run in one band; 1024^2
// layers in bands of 48 (128 channels) or 24 (256).
constexpr uint64_t kWinogradRowsBandBytes = uint64_t(96) << 20;
int64_t winogradRowsBandRows(const ConvProblem& prob, const GemmTile& tile, int64_t forced = 0);

// Empty when `candidate` can run the problem in context `cc`; otherwise the first failing condition.
std::string candidateViolation(const ConvCandidate& candidate, const ConvProblem& prob, const ConvContext& cc);

// The plan that runs `candidate` (source "forced"); throws sdgen::Error when its contract does not hold.
ConvPlan planConvCandidate(const ConvCandidate& candidate, const ConvProblem& prob, const ConvContext& cc,
                           const std::string& label);

// What planConv(Auto) runs, as a candidate (coop: the tile and split-K rule of ops/gemm_tile_choice.cpp). nullopt
// where the rule's coop tile is none of the candidates' (SDGEN_COOP_BIG_TILE / SMALL_TILE set).
std::optional<ConvCandidate> ruleCandidate(const ConvProblem& prob, const ConvContext& cc);

// The candidates worth timing for a problem in context `cc` (each passes candidateViolation), the rule's own
// among them: direct (Cout <= 4), coop 128x128 and 64x64 with split-K 1/2/4/8/16 where splitting is allowed,
// Winograd on the rule's tile, GEMM v2 on the rule's tile where no coop tile runs, general only where nothing
// else runs.
std::vector<ConvCandidate> convCandidates(const ConvProblem& prob, const ConvContext& cc);

}  // namespace sdgen::ops
