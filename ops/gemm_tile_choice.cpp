// The GEMM's tile choice: split-K, the wave rules and the fp16-accumulator tiles, per shape and device
// (docs/dispatch.md). Declared in ops/linear_gemm.h; ops::linear and the convolutions apply them.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "engine/error.h"
#include "ops/conv2d_plan.h"
#include "ops/linear_gemm.h"

namespace sdgen::ops {

// Small problems (the UNet's 8 x 8 and 16 x 16 levels: M = 128 or 512 rows) have too few tiles to keep the
// H100's 132 SMs busy while each workgroup walks a K of 5,000-11,000. Measured over SD 1.5's linear shapes
// (docs/perf.md, split-K): splitting pays until about kTargetGroups 64 x 64 workgroups run (a 128 x 128 tile
// counts as four: it already fills the GPU wherever the tile rule picks it); each part keeps at least 8 slices
// of K, 16 where the tiles alone give every SM two workgroups (there the partials' traffic, 2 x 4 bytes per
// output per part, and the sum launch cost more than the extra parallelism returns).
// SDGEN_SPLIT_TARGET=N / SDGEN_SPLIT_MIN_SLICES=N replace kTargetGroups and the 8 slices per part (16 where busy:
// twice it) for measurements (docs/dispatch.md).
static int64_t splitKnob(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  const int64_t n = v ? std::atoll(v) : 0;
  return n > 0 ? n : fallback;
}

int normalizedSplitParts(int64_t parts, int64_t slices) {
  const int64_t chunk = (slices + parts - 1) / std::max<int64_t>(parts, 1);  // slices per part
  return int((slices + chunk - 1) / std::max<int64_t>(chunk, 1));             // the parts that remain
}

int chooseSplitK(const GemmTile& t, int64_t m, int64_t n, int64_t k, int64_t batches) {
  const int64_t kTargetGroups = splitKnob("SDGEN_SPLIT_TARGET", 640), kBusyTiles = 256;
  const int64_t minSlices = splitKnob("SDGEN_SPLIT_MIN_SLICES", 8);
  const int64_t tiles = ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn) * batches;
  const int64_t units = tiles * (int64_t(t.bm) * t.bn) / (64 * 64);  // in 64 x 64 workgroups
  const int64_t slices = (k + t.bk - 1) / t.bk;
  const int64_t parts = std::min({kTargetGroups / std::max<int64_t>(units, 1),
                                  slices / (units >= kBusyTiles ? 2 * minSlices : minSlices), int64_t(64)});
  if (parts < 2) return 1;
  return normalizedSplitParts(parts, slices);
}

// Wave balance (session 33, H200, docs/dispatch.md "Wave-balanced split-K"): a problem whose 128 x 128 tiles
// fill 1.2 waves of the GPU's resident workgroups runs as long as two waves (the SMs holding two tiles set the
// time). SDXL's 32^2 feed-forward out (2048 x 1280 outputs, K 5120: 160 tiles for 264 slots) took 0.172 ms
// unsplit and 0.167 on 64 x 64 tiles, 0.124 in 3 parts (linear_bench, split 2-8 measured). Cost model, in
// "slice waves" (every resident workgroup multiplies one BK slice; ~1.05 us on the H200 for either tile):
// ceil(tiles x parts / slots) x slices per part, plus per part its fp16 partials written and read (M x N / 1e6)
// and 4 for the sum launch; slots = SMs x workgroups per SM, which the ~48 KB of shared memory an SM gives
// compute (session 24) fixes: 2 for 128 x 128, 5 for 64 x 64. Its ranking matched the measured one on SDXL's
// shapes; it is trusted only where it predicts >= 15 % and each part keeps >= 16 slices of K, and only from
// 2048 rows (smaller problems are latency bound: the model mispredicts them, and chooseSplitK's rule was
// measured there). Needs the SM count (VK_NV_shader_sm_builtins), else nothing changes. SDGEN_WAVE_SPLIT=0
// turns it off (A/B measurements).
static constexpr int64_t kSharedPerMultiprocessor = 48 * 1024;  // measured, session 24 (residency_probe_bench)

// Workgroups of tile `t` resident at once: the SMs times how many of its shared-memory footprints fit the ~48 KB an
// SM gives compute (for the coop tiles the register limit gives the same count).
static int64_t residentSlots(const GemmTile& t, uint32_t multiprocessors) {
  return std::max<int64_t>(1, kSharedPerMultiprocessor / std::max<int64_t>(1, t.sharedBytes())) * multiprocessors;
}

double waveCost(const GemmTile& t, int64_t m, int64_t n, int64_t k, uint32_t multiprocessors) {
  const int64_t slots = residentSlots(t, multiprocessors);
  const int64_t tiles = ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn);
  const int64_t slices = (k + t.bk - 1) / t.bk, parts = normalizedSplitParts(t.splitK, slices);
  const int64_t chunk = (slices + parts - 1) / parts;
  double cost = double((tiles * parts + slots - 1) / slots) * double(chunk);
  if (parts > 1) cost += double(parts) * double(m) * double(n) / 1e6 + 4;
  return cost;
}

std::optional<GemmTile> chooseWaveSplit(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                        const DeviceInfo& info) {
  constexpr int64_t kMinRows = 2048, kMinPartSlices = 16;
  constexpr double kRequiredGain = 0.85;
  if (const char* v = std::getenv("SDGEN_WAVE_SPLIT"); v && std::strcmp(v, "0") == 0) return std::nullopt;
  if (!info.multiprocessors || !current.isCoop() || current.f16Accumulators || current.halfAccumulate ||
      current.doubleBuffer || m < kMinRows || n % 4)
    return std::nullopt;
  const double now = waveCost(current, m, n, k, info.multiprocessors);
  std::optional<GemmTile> best;
  double bestCost = now * kRequiredGain;
  for (int parts = 1; parts <= 8; ++parts) {
    GemmTile t = GemmTile::coopTile(128, 128, 32, 4, 2, false, parts);
    const int64_t slices = (k + t.bk - 1) / t.bk;
    if ((slices + parts - 1) / parts < kMinPartSlices) break;
    t.splitK = normalizedSplitParts(parts, slices);
    if (t.splitK > 1 && int64_t(t.splitK) * m * n >= (int64_t(1) << 31)) break;  // the partials' bound (recordGemm)
    const double c = waveCost(t, m, n, k, info.multiprocessors);
    if (c <= bestCost && coopTileProblem(t, info).empty()) {
      best = t;
      bestCost = c;
    }
  }
  return best;
}

// One-wave tile (session 34, H200, docs/dispatch.md "One-wave tile"): 4 subgroups of 32 x 80 in a 64 x 160 tile
// hold 203 registers and 21 KB of shared memory, so 2 run per SM, and an SM multiplies as many outputs per slice
// as with five 64 x 64 tiles, ~15 % faster (fewer fragment loads per MMA, fewer staged rows per output). Where
// its tiles make one nearly full wave (>= 3/4 of the slots) and the rule took 64 x 64 for that reason (SDXL's
// 32^2 level: 2048 x 1280 outputs are 256 tiles of 64 x 160 for 264 slots, 640 of 64 x 64 for 660), it gains
// that 15 %: linear_bench, 32^2 output projections 0.0474 -> 0.0398 ms, attn2 q 0.0528 -> 0.0449, proj_in
// 0.0530 -> 0.0447. Where its waves are more (SDXL's QKV, 768 tiles) or partly empty it lost, and the 64^2
// level's 8192 x 640 outputs (1.9 waves against 1.2 of 128 x 128) were even. SDGEN_WAVE_TILE=0 turns it off;
// SDGEN_WAVE_TILE=H / h, with O for spirv-opt (session 38, a measurement knob: off by default), gives the tile fp16
// accumulators (ACC 2: K <= 2048 in one fp16 sum) / fp16 within each K slice added into fp32 (ACC 1), for the step
// A/B of its K-1280 layers (SDXL's 32^2 output projections, attn2 q, proj_in: ~150 TFLOP/s in fp32 accumulators).
std::optional<GemmTile> chooseOneWaveTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                          const DeviceInfo& info, bool spirvOpt) {
  constexpr int64_t kMinRows = 2048, kMinSlices = 16;
  const char* v = std::getenv("SDGEN_WAVE_TILE");
  const std::string knob = v ? v : "";
  if (knob == "0") return std::nullopt;
  if (!info.multiprocessors || !current.isCoop() || current.bm != 64 || current.bn != 64 || current.splitK > 1 ||
      current.f16Accumulators || current.halfAccumulate || current.doubleBuffer || m < kMinRows)
    return std::nullopt;
  GemmTile t = GemmTile::coopTile(64, 160, 32, 2, 5, knob.find('h') != std::string::npos);
  t.f16Accumulators = knob.find('H') != std::string::npos;
  if (t.f16Accumulators && k > 2048) return std::nullopt;  // ACC 2 sums all of K in fp16: the short-K bound
  t.spirvOpt = spirvOpt && knob.find('O') != std::string::npos;
  if (n % t.bn || (k + t.bk - 1) / t.bk < kMinSlices || !coopTileProblem(t, info).empty()) return std::nullopt;
  const int64_t slots = residentSlots(t, info.multiprocessors), tiles = ((m + t.bm - 1) / t.bm) * (n / t.bn);
  if (tiles > slots || 4 * tiles < 3 * slots) return std::nullopt;
  return t;
}

// SDGEN_COOP_BIG_TILE / SDGEN_COOP_SMALL_TILE = "BM,BN,BK,WM,WN[,h|,H][,FK][,O][,d]": the tile of the large-problem bucket
// below, or of every other problem, for measuring candidates through whole layers and steps (--bench-conv2d,
// --profile-conv) without rebuilding; developer knobs (docs/dispatch.md), checked like any forced tile.
static std::optional<GemmTile> coopTileOverride(const char* variable) {
  const char* v = std::getenv(variable);
  if (!v || !*v) return std::nullopt;
  int bm = 0, bn = 0, bk = 0, wm = 0, wn = 0;
  if (std::sscanf(v, "%d,%d,%d,%d,%d", &bm, &bn, &bk, &wm, &wn) != 5)
    throw Error(std::string(variable) + " '" + std::string(v).substr(0, 64) + "': expected BM,BN,BK,WM,WN[,h|,H][,FK][,O][,d]");
  const std::string s(v);
  GemmTile t = GemmTile::coopTile(bm, bn, bk, wm, wn, s.find(",h") != std::string::npos);
  t.f16Accumulators = s.find(",H") != std::string::npos;
  if (const size_t f = s.find(",F"); f != std::string::npos) t.flushK = std::atoi(s.c_str() + f + 2);
  t.spirvOpt = s.find(",O") != std::string::npos;
  t.doubleBuffer = s.find(",d") != std::string::npos;
  return t;
}

// Tensor cores, measured on the H100 over SD 1.5's linear shapes (docs/dispatch.md, docs/perf.md): 64 x 64
// tiles (4 subgroups of 32 x 32) win on everything but large problems, where 128 x 128 reuses each staged
// slice twice as much: M >= 2048 rows and at least 240 such tiles. There 8 subgroups of 64 x 32 beat 4 of
// 64 x 64 (4096^3 0.688 -> 0.629 ms, the VAE's 512^2 convolutions 1.19 -> 0.94 ms): twice the warps hide
// the shared-memory and barrier latency that bounds this kernel.
static GemmTile chooseCoopTile(int64_t m, int64_t n, int64_t k) {
  (void)k;
  const int64_t bigTiles = ((m + 127) / 128) * ((n + 127) / 128);
  if (m >= 2048 && bigTiles >= 240) {
    if (std::optional<GemmTile> forced = coopTileOverride("SDGEN_COOP_BIG_TILE")) return *forced;
    return GemmTile::coopTile(128, 128, 32, 4, 2);
  }
  if (std::optional<GemmTile> forced = coopTileOverride("SDGEN_COOP_SMALL_TILE")) return *forced;
  return GemmTile::coopTile(64, 64, 32, 2, 2);
}

// Measured on the H100 (docs/perf.md, session 10): 4096^3 0.52 ms on 128 x 128 fp32 accumulators, 0.44 ms
// (312 TFLOP/s) on this tile, error 3.3e-3 of max |ref| against the fp32-accumulator kernel (bar 5e-3); the SD
// 1.5 shapes are all smaller or GEGLU-fused and keep chooseCoopTile.
GemmTile largeHalfTile() {
  GemmTile t = GemmTile::coopTile(256, 256, 32, 8, 4);
  t.f16Accumulators = true;
  t.flushK = 2048;
  t.spirvOpt = true;
  return t;
}

std::optional<GemmTile> chooseLargeCoopTile(int64_t m, int64_t n, int64_t k, const DeviceInfo& info, bool spirvOpt) {
  if (!spirvOpt || !gemmCoopSupported(info) || m % 256 || n % 256 || k % 32 || k < 2048 || (m / 256) * (n / 256) < 240)
    return std::nullopt;
  GemmTile t = largeHalfTile();
  if (!coopTileProblem(t, info).empty()) return std::nullopt;
  return t;
}

// Short-K fp16-accumulator tile (session 35, H200, docs/dispatch.md "Short-K fp16-accumulator tile"): the large
// tile above, compiled the same way, also wins on wide products of K 640-1280 whose 256 x 256 tiles fill their
// waves (one workgroup per SM: 40 KB of shared memory). linear_bench beside the engine's 128 x 128 tile, SDXL's
// QKV 2048 x 3840 (K 1280, 120 tiles for 132 SMs) 0.0965 -> 0.0746 ms, 8192 x 1920 (K 640, 256 tiles) 0.1072 ->
// 0.0958, GEGLU 2048 x 10240 (320 tiles) 0.2245 -> 0.2056, 8192 x 5120 (640 tiles) 0.2489 -> 0.2063; it lost
// on every shape of K 320 (SD 1.5's 64^2 level: 0.0389 -> 0.0402, 0.0812 -> 0.0844: too few slices for its
// longer prologue and epilogue) and where its last wave is mostly empty (SD 1.5's 32^2 GEGLU, 160 tiles: 0.0691
// -> 0.0846; 32^2 QKV, 64 tiles: 0.0320 -> 0.0476). Hence: K of 20-64 slices (no flush: one fp16 chunk, error
// <= 3.9e-3 of max |ref| against fp32 accumulators, bar 5e-3), >= 2048 rows, an unsplit tile chosen before, and
// waves >= 80 % full. SDGEN_HALF_TILE=0 turns it off (A/B measurements).
std::optional<GemmTile> chooseShortKHalfTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                             const DeviceInfo& info, bool spirvOpt) {
  constexpr int64_t kMinRows = 2048, kMinK = 640, kMaxK = 2048;
  if (const char* v = std::getenv("SDGEN_HALF_TILE"); v && std::strcmp(v, "0") == 0) return std::nullopt;
  if (!spirvOpt || !info.multiprocessors || !current.isCoop() || current.splitK > 1 || current.f16Accumulators ||
      current.halfAccumulate || current.doubleBuffer || m < kMinRows || k < kMinK || k > kMaxK || k % 32 || n % 8)
    return std::nullopt;
  const GemmTile t = largeHalfTile();  // K <= 2048 never flushes: no scratch
  if (!coopTileProblem(t, info).empty()) return std::nullopt;
  const int64_t slots = residentSlots(t, info.multiprocessors);
  const int64_t tiles = ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn);
  const int64_t waves = (tiles + slots - 1) / slots;
  if (5 * tiles < 4 * waves * slots) return std::nullopt;
  return t;
}

// The split fp16-accumulator tile over all of K in as many parts as fill one wave of it, each part minPartK..2048
// deep; nullopt where the shape does not fit (whole 256 x 256 tiles, >= 2048 rows, >= 80 % of the wave).
static std::optional<GemmTile> splitHalfTile(int64_t m, int64_t n, int64_t k, const DeviceInfo& info, bool spirvOpt,
                                             int64_t minPartK) {
  constexpr int64_t kMinRows = 2048, kMaxPartK = 2048;
  if (!spirvOpt || !info.multiprocessors || m < kMinRows || m % 256 || n % 256 || k % 32) return std::nullopt;
  GemmTile t = largeHalfTile();
  t.flushK = 0;  // each part's K fits one fp16 chunk
  if (!coopTileProblem(t, info).empty()) return std::nullopt;
  const int64_t slots = residentSlots(t, info.multiprocessors), tiles = (m / 256) * (n / 256);
  if (2 * tiles > slots) return std::nullopt;  // not two parts per tile in one wave
  const int64_t slices = k / 32, parts = normalizedSplitParts(std::min<int64_t>(slots / tiles, 64), slices);
  const int64_t partK = (slices + parts - 1) / parts * 32;
  if (parts < 2 || 5 * tiles * parts < 4 * slots || partK < minPartK || partK > kMaxPartK) return std::nullopt;
  t.splitK = int(parts);
  return t;
}

// Split fp16-accumulator tile (session 36, H200, docs/dispatch.md "Split fp16-accumulator tile"): the same tile
// over K parts where its few tiles leave most SMs idle. linear_bench, SDXL's 32^2 ff out (2048 x 1280, K 5120: 40
// tiles): the engine's 128 x 128 fp32 tile in 3 parts 0.1232 ms, this tile in 3 parts (120 workgroups, one per SM)
// **0.0915**, in 2 parts 0.1271, in 4 (160: two waves) 0.1328; max |diff| 1.9e-3 of max |ref| against the fp32
// accumulators. Each part accumulates <= 2048 of K in fp16 (no flush: ACC 2), the fp16 or fp32 partials are summed
// in fp32 by the split-K sum. Hence: a split tile chosen before, whole 256 x 256 tiles, >= 2048 rows, the parts
// that fit one wave filling it to >= 80 %, and 640..2048 of K per part. SDGEN_SPLIT_HALF_TILE=0 turns it off;
// SDGEN_SPLIT_HALF_MIN_PART_K=N replaces the 640 (measurements: SDXL's 32^2 output projections, K 1280 in 3 parts
// of 448, ran 0.0401 -> 0.0367 ms in linear_bench, session 36: chooseWaveSplitHalfTile below takes them).
std::optional<GemmTile> chooseSplitHalfTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                            const DeviceInfo& info, bool spirvOpt) {
  if (const char* v = std::getenv("SDGEN_SPLIT_HALF_TILE"); v && std::strcmp(v, "0") == 0) return std::nullopt;
  if (!current.isCoop() || current.splitK < 2 || current.f16Accumulators) return std::nullopt;
  return splitHalfTile(m, n, k, info, spirvOpt, splitKnob("SDGEN_SPLIT_HALF_MIN_PART_K", 640));
}

// The split fp16-accumulator tile instead of the one-wave tile (session 39, docs/dispatch.md "Split fp16-accumulator
// tile"): SDXL's 32^2 output projections (2048 x 1280, K 1280; 126 per step) run 0.0399 ms on the one-wave 64 x 160
// tile and 0.0367 on the 256 x 256 fp16-accumulator tile in 3 parts of 448 (40 tiles, 120 workgroups; linear_bench,
// sessions 36 and 38, max |diff| 1.1e-3 of max |ref|). Parts of >= 448 of K (14 slices), where the one-wave tile was
// chosen; the caller keeps a layer norm of the input out of this tile's A staging (read once into fp16 scratch:
// its 5 column tiles would normalize every element 5 times, 0.0472 ms in linear_bench). Measured in the step
// (session 39, H200): linear_bench SDXL per step 37.37 -> 36.81 ms, the fp16 UNet step 70.06 -> 69.13 / 69.04 ms
// (with the conv candidates of that session). SDGEN_WAVE_SPLIT_HALF=0 turns it off.
std::optional<GemmTile> chooseWaveSplitHalfTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                                const DeviceInfo& info, bool spirvOpt) {
  constexpr int64_t kMinPartK = 448;
  if (const char* v = std::getenv("SDGEN_WAVE_SPLIT_HALF"); v && std::strcmp(v, "0") == 0) return std::nullopt;
  if (!current.isCoop() || current.bm != 64 || current.bn != 160 || current.splitK > 1 || current.f16Accumulators ||
      current.halfAccumulate)
    return std::nullopt;
  return splitHalfTile(m, n, k, info, spirvOpt, kMinPartK);
}

// Tail split (session 37, docs/dispatch.md "Tail split"; measured in session 38: SDXL's step 69.96 -> 69.24 ms;
// SDGEN_TAIL_SPLIT=0 turns it off). The 256 x 256 fp16-accumulator tile runs one workgroup per SM; SDXL's 32^2 GEGLU projection
// (2048 x 10240, K 1280: 320 tiles for 132 SMs) runs 0.196 ms, its first 264 tiles alone 0.132 (session 36): the
// last 56 tiles cost a whole third wave. Split those over K instead, in as many parts as fill the last wave's
// SMs (2: 112 workgroups of K 640), in the same launch after the whole-K tiles, and sum them in the split-K sum
// (with the GEGLU epilogue): bound ~0.04 ms for the tail, ~-1.3 ms per SDXL step in linear_bench. Where: the
// unsplit 256 x 256 fp16-accumulator tile without a flush, >= 2 waves of tiles whose last is at most half full;
// the whole-K tiles are the column tiles that fit the waves before the last; at most 8 parts of >= 320 of K each.
std::optional<GemmTile> chooseTailSplit(const GemmTile& current, int64_t m, int64_t n, int64_t k, const DeviceInfo& info) {
  constexpr int64_t kMinPartK = 320, kMaxParts = 8;
  if (const char* v = std::getenv("SDGEN_TAIL_SPLIT"); v && std::strcmp(v, "0") == 0) return std::nullopt;
  if (!info.multiprocessors || !current.isCoop() || !current.f16Accumulators || current.splitK > 1 ||
      current.tailParts > 1 || current.bm != 256 || current.bn != 256 || (current.flushK > 0 && k > current.flushK) ||
      k % current.bk)
    return std::nullopt;
  const int64_t slots = residentSlots(current, info.multiprocessors);
  const int64_t rowTiles = (m + current.bm - 1) / current.bm, colTiles = (n + current.bn - 1) / current.bn;
  const int64_t tiles = rowTiles * colTiles, waves = (tiles + slots - 1) / slots;
  const int64_t last = tiles - (waves - 1) * slots;
  if (waves < 2 || 2 * last > slots) return std::nullopt;
  const int64_t wholeCols = (waves - 1) * slots / rowTiles;
  if (wholeCols < 1 || wholeCols >= colTiles) return std::nullopt;
  const int64_t tailTiles = (colTiles - wholeCols) * rowTiles, slices = k / current.bk;
  const int64_t parts = normalizedSplitParts(std::min({slots / tailTiles, kMaxParts, k / kMinPartK}), slices);
  if (parts < 2) return std::nullopt;
  GemmTile t = current;
  t.flushK = 0;  // K <= the flush interval: one fp16 chunk (ACC 2; the kernel's word 11 is the parts' K)
  t.tailStart = int(wholeCols * current.bn);
  t.tailParts = int(parts);
  return t;
}

// Wide fp16-accumulator tile (session 40, opt-in: SDGEN_WIDE_HALF_TILE=128 or 160; session 41 measured 128 slower in
// SDXL's step on the H100, +1.3 ms; 160 not yet measured; docs/dispatch.md): 256 x 128 (8 subgroups of 64 x 64) or
// 256 x 160 (64 x 80) tiles with fp16 accumulators, spirv-opt, where the rule took the 128 x 128 fp32-accumulator
// tile and N is a multiple of the new width but not of 256 (which the 256 x 256 tiles take): SDXL's 64^2 level, 8192
// x 640 (proj_in, attn2 q at ~112 TFLOP/s, the output projections at ~145, ff out in 4 parts at ~191; linear_bench,
// session 39). Each part's K in one fp16 sum (<= 2048): unsplit where K is, else the fewest such parts (split-K,
// scratch). The caller stages a layer-normed input once (as for the split fp16-accumulator tile: a 256-row tile whose
// A staging would normalize again per column tile).
std::optional<GemmTile> chooseWideHalfTile(const GemmTile& current, int64_t m, int64_t n, int64_t k,
                                           const DeviceInfo& info, bool spirvOpt) {
  constexpr int64_t kMinRows = 2048, kMaxPartK = 2048;
  const char* v = std::getenv("SDGEN_WIDE_HALF_TILE");
  const int bn = v && std::strcmp(v, "128") == 0 ? 128 : v && std::strcmp(v, "160") == 0 ? 160 : 0;
  if (!bn || !spirvOpt || !current.isCoop() || current.bm != 128 || current.bn != 128 || current.f16Accumulators ||
      current.halfAccumulate || current.doubleBuffer || m < kMinRows || m % 256 || n % bn || n % 256 == 0 || k % 32)
    return std::nullopt;
  GemmTile t = GemmTile::coopTile(256, bn, 32, 4, bn / 32);
  t.f16Accumulators = true;
  t.spirvOpt = true;
  const int64_t slices = k / 32;
  t.splitK = normalizedSplitParts((k + kMaxPartK - 1) / kMaxPartK, slices);
  if (!coopTileProblem(t, info).empty()) return std::nullopt;
  return t;
}

GemmTile chooseGemmTile(int64_t m, int64_t n, int64_t k, const DeviceInfo& info, bool fp16Weights) {
  // fp16 weights (the fp16 precision) on a device with tensor cores: the cooperative-matrix kernel.
  if (fp16Weights && gemmCoopSupported(info)) {
    GemmTile t = chooseCoopTile(m, n, k);
    if (coopTileProblem(t, info).empty()) return t;
  }
  if (useCpuGemmKernels(info) && k % 4 == 0 && n % 4 == 0) {
    // CPU (lavapipe): the lanes kernel, fewer rows per lane for few rows (the rest would be clamped padding),
    // one 32-column group (docs/dispatch.md). Larger tiles (8 rows, 2 groups) run ~1.5x faster but their
    // fully unrolled epilogue (rows x columns sink stores) took llvmpipe minutes to compile for fused sinks;
    // scalar paths (K or N not a multiple of 4) multiply the code by 4 again and stay on the tiled kernel.
    const int rows = m <= 8 ? 1 : m <= 16 ? 2 : 4;
    return GemmTile::lanesTile(8, rows, 1);
  }
  // Few rows (time embeddings, pooled vectors): a 16-row tile wastes less of the workgroup.
  GemmTile t = m <= 16 ? GemmTile{16, 64, 16} : GemmTile{64, 64, 16};
  if (t.sharedBytes() > info.sharedMemoryPerWorkgroup || uint32_t(t.threads()) > info.maxWorkgroupInvocations)
    throw Error("gemm: the " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + " tile needs " +
                std::to_string(t.sharedBytes()) + " bytes of shared memory and " + std::to_string(t.threads()) +
                " threads; the device allows " + std::to_string(info.sharedMemoryPerWorkgroup) + " and " +
                std::to_string(info.maxWorkgroupInvocations));
  return t;
}

}  // namespace sdgen::ops
