// Split-K for the tensor-core GEMM (shaders/linear/gemm_coop.slang SPLIT = 1, gemm_split.slang), host side:
// the rule that picks the number of parts, the refusals, and the generated kernels compiling to SPIR-V (so that
// CI without cooperative matrices still catches a kernel that would not build on the H100). The kernels'
// results are checked against float64 on tensor-core devices by LinearTest.CoopMatrixKernelWhereSupported and
// ConvTest.CoopWhereSupported (scripts/device/run-tests.sh). Also the GEMM header's row divisors (GemmHeader).
#include <filesystem>
#include <optional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "engine/error.h"
#include "engine/slang_compiler.h"
#include "ops/linear_gemm.h"
#include "tests/ops/gemm_coop_test_support.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

TEST(GemmSplitK, RuleFillsTheGpuOnlyWhereTilesDoNot) {
  const ops::GemmTile t = ops::GemmTile::coopTile(64, 64, 32, 2, 2);
  // The UNet's 8x8 convolutions (M 128, N 1280, K 11520): 40 tiles, 360 slices -> 16 parts of 23 slices.
  EXPECT_EQ(ops::chooseSplitK(t, 128, 1280, 11520, 1), 16);
  // 16x16 feed-forward out (M 512, N 1280, K 5120): 160 tiles -> 4 parts of 40 slices.
  EXPECT_EQ(ops::chooseSplitK(t, 512, 1280, 5120, 1), 4);
  // Enough tiles already (64x64 level, 640 tiles): no split.
  EXPECT_EQ(ops::chooseSplitK(t, 8192, 320, 2880, 1), 1);
  // 320 tiles: two parts where K is deep (32x32 feed-forward out, K 2560), none where it is not (K 640).
  EXPECT_EQ(ops::chooseSplitK(t, 2048, 640, 2560, 1), 2);
  EXPECT_EQ(ops::chooseSplitK(t, 2048, 640, 640, 1), 1);
  // A 128 x 128 tile counts as four 64 x 64 ones (32x32 QKV: 240 tiles): no split.
  EXPECT_EQ(ops::chooseSplitK(ops::GemmTile::coopTile(128, 128, 32, 4, 4), 2048, 1920, 640, 1), 1);
  // Too shallow a K to be worth parts of at least 8 slices.
  EXPECT_EQ(ops::chooseSplitK(t, 128, 320, 320, 1), 1);
  // Batches count as tiles.
  EXPECT_EQ(ops::chooseSplitK(t, 128, 1280, 11520, 16), 1);
  // Every part is non-empty: parts x chunk covers K, (parts - 1) x chunk does not.
  for (int64_t k : {512, 600, 1000, 4096, 11520, 23040})
    for (int64_t m : {16, 128, 512}) {
      const int parts = ops::chooseSplitK(t, m, 640, k, 1);
      const int64_t slices = (k + 31) / 32, chunk = (slices + parts - 1) / parts;
      EXPECT_GE(parts * chunk, slices) << k;
      EXPECT_LT((parts - 1) * chunk, slices) << k;
      EXPECT_LE(parts, 64);
    }
}

using test::h100Like;
using test::h100LikeWithHalfAccumulators;

// The wave-balanced rule (ops::chooseWaveSplit) on the shapes it was measured on (session 33, H200: SDXL's and
// SD 1.5's linear layers, linear_bench split 2-8), with an H100/H200's 132 SMs.
TEST(GemmSplitK, WaveBalancedRuleOnMeasuredShapes) {
  DeviceInfo d = h100Like();
  const ops::GemmTile small = ops::GemmTile::coopTile(64, 64, 32, 2, 2), big = ops::GemmTile::coopTile(128, 128, 32, 4, 2);
  auto choose = [&](const ops::GemmTile& current, int64_t m, int64_t n, int64_t k) {
    std::optional<ops::GemmTile> t = ops::chooseWaveSplit(current, m, n, k, d);
    return t ? t->describe() : std::string("keep");
  };
  // SDXL 32^2 feed-forward out (2048 x 1280, K 5120; 160 tiles of 128 x 128 for 264 slots): 0.167 ms on 64 x 64,
  // 0.124 in 3 parts of 128 x 128 (2 and 4 parts: 0.163, 0.140).
  EXPECT_EQ(choose(small, 2048, 1280, 5120), "coop 128x128x32 warp 64x32 split 3");
  // SDXL 64^2 feed-forward out (8192 x 640, K 2560; 320 tiles): 0.164 ms unsplit, 0.141 in 3 or 4 parts.
  EXPECT_EQ(choose(big, 8192, 640, 2560), "coop 128x128x32 warp 64x32 split 4");
  // SD 1.5 32^2 feed-forward out (2048 x 640, K 2560) on 64 x 64 in 2 parts today: 3 parts of 128 x 128.
  EXPECT_EQ(choose(ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 2), 2048, 640, 2560),
            "coop 128x128x32 warp 64x32 split 3");
  // Kept: K too shallow for 16-slice parts (SDXL 32^2 out, proj_in, q: K 1280), enough tiles (SDXL 32^2 QKV: 480
  // tiles, measured slower split), fewer than 2048 rows (SD 1.5 16^2 feed-forward out), no SM count.
  EXPECT_EQ(choose(small, 2048, 1280, 1280), "keep");
  EXPECT_EQ(choose(big, 2048, 3840, 1280), "keep");
  EXPECT_EQ(choose(big, 8192, 1920, 640), "keep");
  EXPECT_EQ(choose(ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 4), 512, 1280, 5120), "keep");
  d.multiprocessors = 0;
  EXPECT_EQ(choose(small, 2048, 1280, 5120), "keep");
  d.multiprocessors = 132;
  // The model's units: 160 tiles of 160 slices in one wave of 264 slots cost 160; 3 parts of 54 slices in two
  // waves cost 108 plus 3 x 2.6 of partials and 4 for the sum.
  EXPECT_DOUBLE_EQ(ops::waveCost(big, 2048, 1280, 5120, 132), 160.0);
  EXPECT_NEAR(ops::waveCost(ops::GemmTile::coopTile(128, 128, 32, 4, 2, false, 3), 2048, 1280, 5120, 132),
              108 + 3 * 2.62144 + 4, 1e-9);
}

// The one-wave tile (ops::chooseOneWaveTile) on the shapes it was measured on (session 34, H200, linear_bench:
// SDXL's linear layers on 64 x 64, 128 x 128, 64 x 160 and six other tiles), with 132 SMs: 2 tiles of 64 x 160 per SM.
TEST(GemmSplitK, OneWaveTileOnMeasuredShapes) {
  DeviceInfo d = h100Like();
  const ops::GemmTile small = ops::GemmTile::coopTile(64, 64, 32, 2, 2), big = ops::GemmTile::coopTile(128, 128, 32, 4, 2);
  EXPECT_EQ(ops::GemmTile::coopTile(64, 160, 32, 2, 5).sharedBytes(), 21504u);  // 2 per SM of ~48 KB
  auto choose = [&](const ops::GemmTile& current, int64_t m, int64_t n, int64_t k) {
    std::optional<ops::GemmTile> t = ops::chooseOneWaveTile(current, m, n, k, d);
    return t ? t->describe() : std::string("keep");
  };
  // SDXL 32^2 output projections, attn2 q and proj_in (2048 x 1280, K 1280): 256 tiles for 264 slots, 0.0474 ->
  // 0.0398 ms, 0.0528 -> 0.0449, 0.0530 -> 0.0447.
  EXPECT_EQ(choose(small, 2048, 1280, 1280), "coop 64x160x32 warp 32x80");
  // SD 1.5's 64^2 feed-forward out (8192 x 320, K 1280): 256 tiles, 0.0474 -> 0.0400 ms.
  EXPECT_EQ(choose(small, 8192, 320, 1280), "coop 64x160x32 warp 32x80");
  // Kept: not the 64 x 64 tile (the 128 x 128 rule's problems, a split), more than a wave (8192 x 640: 512 tiles,
  // even with 128 x 128; SDXL 32^2 QKV 768 tiles: 0.096 on 128 x 128 against 0.112), a wave mostly empty (SD 1.5's
  // 32^2 level, 2048 x 640: 128 tiles), K under 16 slices (SD 1.5's 64^2 level, K 320), N not a multiple of 160,
  // fewer than 2048 rows, no SM count.
  EXPECT_EQ(choose(big, 2048, 1280, 1280), "keep");
  EXPECT_EQ(choose(ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 2), 2048, 1280, 1280), "keep");
  EXPECT_EQ(choose(small, 8192, 640, 640), "keep");
  EXPECT_EQ(choose(small, 2048, 3840, 1280), "keep");
  EXPECT_EQ(choose(small, 2048, 640, 640), "keep");
  EXPECT_EQ(choose(small, 8192, 320, 320), "keep");
  EXPECT_EQ(choose(small, 2048, 1200, 1280), "keep");
  EXPECT_EQ(choose(small, 1024, 2560, 1280), "keep");
  // 3/4 of a wave (198 tiles) is the floor: 224 tiles take it, 192 do not.
  EXPECT_EQ(choose(small, 2048, 1120, 1280), "coop 64x160x32 warp 32x80");
  EXPECT_EQ(choose(small, 2048, 960, 1280), "keep");
  d.multiprocessors = 0;
  EXPECT_EQ(choose(small, 2048, 1280, 1280), "keep");
}

// SDGEN_WAVE_TILE's measurement forms (session 38): fp16 accumulators (H; K within one fp16 sum), fp16 slices (h),
// spirv-opt (O) only where the optimizer is; 0 turns the tile off.
TEST(GemmSplitK, OneWaveTileKnob) {
  DeviceInfo d = h100LikeWithHalfAccumulators();
  const ops::GemmTile small = ops::GemmTile::coopTile(64, 64, 32, 2, 2);
  auto choose = [&](const char* knob, int64_t k, bool spirvOpt) {
    test::ScopedEnv env("SDGEN_WAVE_TILE", knob);
    std::optional<ops::GemmTile> t = ops::chooseOneWaveTile(small, 2048, 1280, k, d, spirvOpt);
    return t ? t->describe() : std::string("keep");
  };
  EXPECT_EQ(choose(nullptr, 1280, true), "coop 64x160x32 warp 32x80");
  EXPECT_EQ(choose("0", 1280, true), "keep");
  EXPECT_EQ(choose("H", 1280, false), "coop 64x160x32 warp 32x80 f16acc");
  EXPECT_EQ(choose("HO", 1280, true), "coop 64x160x32 warp 32x80 f16acc opt");
  EXPECT_EQ(choose("HO", 1280, false), "coop 64x160x32 warp 32x80 f16acc");
  EXPECT_EQ(choose("hO", 1280, true), "coop 64x160x32 warp 32x80 acc16 opt");
  EXPECT_EQ(choose("H", 2560, true), "keep");  // over one fp16 sum
  EXPECT_EQ(choose("h", 2560, true), "coop 64x160x32 warp 32x80 acc16");
}

// The short-K fp16-accumulator tile (ops::chooseShortKHalfTile) on the shapes it was measured on (session 35,
// H200, linear_bench: every SDXL and SD 1.5 linear shape on the 256 x 256 tile beside the engine's choice).
TEST(GemmSplitK, ShortKHalfTileOnMeasuredShapes) {
  DeviceInfo d = h100LikeWithHalfAccumulators();
  const ops::GemmTile small = ops::GemmTile::coopTile(64, 64, 32, 2, 2), big = ops::GemmTile::coopTile(128, 128, 32, 4, 2);
  bool spirvOpt = true;
  auto choose = [&](const ops::GemmTile& current, int64_t m, int64_t n, int64_t k) {
    std::optional<ops::GemmTile> t = ops::chooseShortKHalfTile(current, m, n, k, d, spirvOpt);
    return t ? t->describe() : std::string("keep");
  };
  const std::string half = "coop 256x256x32 warp 128x64 f16acc flush 2048 opt";
  // SDXL: QKV at 32^2 (2048 x 3840, K 1280: 120 tiles for 132 SMs) 0.0965 -> 0.0746 ms, at 64^2 (8192 x 1920,
  // K 640: 256 tiles, the last column tile half full) 0.1072 -> 0.0958; GEGLU 2048 x 10240 (320 tiles: 81 % of 3
  // waves) 0.2245 -> 0.2056, 8192 x 5120 (640 tiles) 0.2489 -> 0.2063.
  EXPECT_EQ(choose(big, 2048, 3840, 1280), half);
  EXPECT_EQ(choose(big, 8192, 1920, 640), half);
  EXPECT_EQ(choose(big, 2048, 10240, 1280), half);
  EXPECT_EQ(choose(big, 8192, 5120, 640), half);
  EXPECT_EQ(choose(small, 8192, 5120, 640), half);
  // Kept, each measured slower on the 256 x 256 tile: SD 1.5's 64^2 level (K 320: QKV 0.0389 -> 0.0402, GEGLU
  // 0.0812 -> 0.0844), its 32^2 GEGLU (160 tiles: 61 % of 2 waves; 0.0691 -> 0.0846) and QKV (64 tiles; 0.0320 ->
  // 0.0476), its 16^2 level (512 rows), SDXL's output projections (2048 x 1280: 40 tiles; 8192 x 640: 96) and
  // feed-forward outs (K 5120, 2560).
  EXPECT_EQ(choose(big, 8192, 960, 320), "keep");
  EXPECT_EQ(choose(big, 8192, 2560, 320), "keep");
  EXPECT_EQ(choose(big, 2048, 5120, 640), "keep");
  EXPECT_EQ(choose(big, 2048, 1920, 640), "keep");
  EXPECT_EQ(choose(small, 512, 10240, 1280), "keep");
  EXPECT_EQ(choose(small, 2048, 1280, 1280), "keep");
  EXPECT_EQ(choose(big, 8192, 640, 640), "keep");
  EXPECT_EQ(choose(big, 2048, 1280, 5120), "keep");
  EXPECT_EQ(choose(big, 8192, 640, 2560), "keep");
  // Not over a split, an fp16-accumulator tile already, K not a multiple of 32, N not a multiple of 8; nor
  // without the optimizer (5x slower at -O0), the fp16 accumulator shape, or the SM count.
  EXPECT_EQ(choose(ops::GemmTile::coopTile(128, 128, 32, 4, 2, false, 2), 2048, 3840, 1280), "keep");
  ops::GemmTile f16 = ops::GemmTile::coopTile(128, 128, 32, 4, 4);
  f16.f16Accumulators = true;
  EXPECT_EQ(choose(f16, 2048, 3840, 1280), "keep");
  EXPECT_EQ(choose(big, 2048, 3840, 1270), "keep");
  EXPECT_EQ(choose(big, 2048, 3844, 1280), "keep");
  spirvOpt = false;
  EXPECT_EQ(choose(big, 2048, 3840, 1280), "keep");
  spirvOpt = true;
  d.coopMatrixShapes.pop_back();
  EXPECT_EQ(choose(big, 2048, 3840, 1280), "keep");
  d = h100Like();
  EXPECT_EQ(choose(big, 2048, 3840, 1280), "keep");
}

// The split fp16-accumulator tile (ops::chooseSplitHalfTile) on the shapes it was measured on (session 36, H200,
// linear_bench: SDXL's feed-forward outs on the 256 x 256 tile in 2-4 parts beside the engine's choice).
TEST(GemmSplitK, SplitHalfTileOnMeasuredShapes) {
  DeviceInfo d = h100LikeWithHalfAccumulators();
  const ops::GemmTile split3 = ops::GemmTile::coopTile(128, 128, 32, 4, 2, false, 3);
  bool spirvOpt = true;
  auto choose = [&](const ops::GemmTile& current, int64_t m, int64_t n, int64_t k) {
    std::optional<ops::GemmTile> t = ops::chooseSplitHalfTile(current, m, n, k, d, spirvOpt);
    return t ? t->describe() : std::string("keep");
  };
  // SDXL's 32^2 ff out (2048 x 1280, K 5120: 40 tiles): 128 x 128 in 3 parts 0.1232 ms, the 256 x 256 tile in 3
  // parts (120 workgroups for 132 SMs, 1728 of K each) 0.0915, in 2 parts 0.1271, in 4 (two waves) 0.1328.
  EXPECT_EQ(choose(split3, 2048, 1280, 5120), "coop 256x256x32 warp 128x64 f16acc split 3 opt");
  EXPECT_EQ(choose(ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 8), 2048, 1280, 5120),
            "coop 256x256x32 warp 128x64 f16acc split 3 opt");
  // Kept: SDXL's 64^2 ff out (8192 x 640, K 2560: N not whole 256-column tiles; 0.1397 ms against 0.1344-0.1621 in
  // 2-4 parts), the output projections at 32^2 (K 1280: 448 per part; 0.0401 -> 0.0367 ms measured: the one-wave
  // tile's rule, chooseWaveSplitHalfTile, takes them), SD 1.5's 16^2 ff out (512 rows: 416 of K per part), 32^2 one (N 640) and 64^2 one (N 320); SDXL's GEGLU
  // and QKV (2048 x 10240 / 3840: 320 / 120 tiles, no room for 2 parts).
  EXPECT_EQ(choose(split3, 8192, 640, 2560), "keep");
  EXPECT_EQ(choose(split3, 2048, 1280, 1280), "keep");
  EXPECT_EQ(choose(split3, 512, 1280, 5120), "keep");
  EXPECT_EQ(choose(split3, 2048, 640, 2560), "keep");
  EXPECT_EQ(choose(split3, 8192, 320, 1280), "keep");
  EXPECT_EQ(choose(split3, 2048, 10240, 1280), "keep");
  EXPECT_EQ(choose(split3, 2048, 3840, 1280), "keep");
  // More than 2048 of K per part (2048 x 1280, K 8192: 2752) or an unsplit or fp16-accumulator tile before; nor
  // without the optimizer, the fp16 accumulator shape or the SM count.
  EXPECT_EQ(choose(split3, 2048, 1280, 8192), "keep");
  EXPECT_EQ(choose(ops::GemmTile::coopTile(128, 128, 32, 4, 2), 2048, 1280, 5120), "keep");
  ops::GemmTile f16 = split3;
  f16.f16Accumulators = true;
  EXPECT_EQ(choose(f16, 2048, 1280, 5120), "keep");
  spirvOpt = false;
  EXPECT_EQ(choose(split3, 2048, 1280, 5120), "keep");
  spirvOpt = true;
  const auto shapes = d.coopMatrixShapes;
  d.coopMatrixShapes.pop_back();
  EXPECT_EQ(choose(split3, 2048, 1280, 5120), "keep");
  d.coopMatrixShapes = shapes;
  d.multiprocessors = 0;
  EXPECT_EQ(choose(split3, 2048, 1280, 5120), "keep");
}

// The split fp16-accumulator tile instead of the one-wave tile (ops::chooseWaveSplitHalfTile; session 36/38,
// H200, linear_bench): SDXL's 32^2 output projections (2048 x 1280, K 1280: 40 tiles of 256 x 256 in 3 parts of 448
// for 132 SMs) 0.0399 -> 0.0367 ms.
TEST(GemmSplitK, WaveSplitHalfTileOnMeasuredShapes) {
  DeviceInfo d = h100LikeWithHalfAccumulators();
  const ops::GemmTile wave = ops::GemmTile::coopTile(64, 160, 32, 2, 5);
  bool spirvOpt = true;
  auto choose = [&](const ops::GemmTile& current, int64_t m, int64_t n, int64_t k) {
    std::optional<ops::GemmTile> t = ops::chooseWaveSplitHalfTile(current, m, n, k, d, spirvOpt);
    return t ? t->describe() : std::string("keep");
  };
  EXPECT_EQ(choose(wave, 2048, 1280, 1280), "coop 256x256x32 warp 128x64 f16acc split 3 opt");
  {
    test::ScopedEnv off("SDGEN_WAVE_SPLIT_HALF", "0");
    EXPECT_EQ(choose(wave, 2048, 1280, 1280), "keep");
  }
  // Kept: SD 1.5's 64^2 ff out (8192 x 320: N not whole 256-column tiles), parts under 448 of K (K 1024: 3 parts of
  // 352), a tile other than the one-wave tile (64 x 64, the one-wave tile split or with fp16 accumulators), and
  // without the optimizer or the SM count.
  EXPECT_EQ(choose(wave, 8192, 320, 1280), "keep");
  EXPECT_EQ(choose(wave, 2048, 1280, 1024), "keep");
  EXPECT_EQ(choose(ops::GemmTile::coopTile(64, 64, 32, 2, 2), 2048, 1280, 1280), "keep");
  EXPECT_EQ(choose(ops::GemmTile::coopTile(64, 160, 32, 2, 5, false, 2), 2048, 1280, 1280), "keep");
  ops::GemmTile f16 = wave;
  f16.f16Accumulators = true;
  EXPECT_EQ(choose(f16, 2048, 1280, 1280), "keep");
  spirvOpt = false;
  EXPECT_EQ(choose(wave, 2048, 1280, 1280), "keep");
  spirvOpt = true;
  d.multiprocessors = 0;
  EXPECT_EQ(choose(wave, 2048, 1280, 1280), "keep");
}

// The wide fp16-accumulator tiles (ops::chooseWideHalfTile; session 40, opt-in SDGEN_WIDE_HALF_TILE=128|160): SDXL's
// 64^2 level, 8192 x 640 on 128 x 128 fp32 tiles -> 256 x 128 or 256 x 160 with fp16 accumulators; ff out (K 2560,
// split 4 today) in 2 parts of 1280.
TEST(GemmSplitK, WideHalfTileOptIn) {
  DeviceInfo d = h100LikeWithHalfAccumulators();
  const ops::GemmTile big = ops::GemmTile::coopTile(128, 128, 32, 4, 2);
  bool spirvOpt = true;
  auto choose = [&](const ops::GemmTile& current, int64_t m, int64_t n, int64_t k) {
    std::optional<ops::GemmTile> t = ops::chooseWideHalfTile(current, m, n, k, d, spirvOpt);
    return t ? t->describe() : std::string("keep");
  };
  {
    test::ScopedEnv off("SDGEN_WIDE_HALF_TILE", nullptr);
    EXPECT_EQ(choose(big, 8192, 640, 640), "keep");
  }
  {
    test::ScopedEnv on("SDGEN_WIDE_HALF_TILE", "128");
    EXPECT_EQ(choose(big, 8192, 640, 640), "coop 256x128x32 warp 64x64 f16acc opt");
    ops::GemmTile split4 = big;
    split4.splitK = 4;
    EXPECT_EQ(choose(split4, 8192, 640, 2560), "coop 256x128x32 warp 64x64 f16acc split 2 opt");
    // Kept: N a multiple of 256 (the 256 x 256 tiles' shapes), N not a multiple of 128 (SD 1.5's 320), M under 2048
    // rows or not a multiple of 256, a tile other than 128 x 128 fp32, no optimizer.
    EXPECT_EQ(choose(big, 2048, 1280, 1280), "keep");
    EXPECT_EQ(choose(big, 8192, 320, 320), "keep");
    EXPECT_EQ(choose(big, 1024, 640, 640), "keep");
    EXPECT_EQ(choose(big, 8000, 640, 640), "keep");
    EXPECT_EQ(choose(ops::GemmTile::coopTile(64, 64, 32, 2, 2), 8192, 640, 640), "keep");
    EXPECT_EQ(choose(ops::largeHalfTile(), 8192, 640, 640), "keep");
    spirvOpt = false;
    EXPECT_EQ(choose(big, 8192, 640, 640), "keep");
    spirvOpt = true;
  }
  test::ScopedEnv on("SDGEN_WIDE_HALF_TILE", "160");
  EXPECT_EQ(choose(big, 8192, 640, 640), "coop 256x160x32 warp 64x80 f16acc opt");
  EXPECT_EQ(choose(big, 8192, 960, 640), "coop 256x160x32 warp 64x80 f16acc opt");
  EXPECT_EQ(choose(big, 8192, 704, 640), "keep");  // not whole 160-column tiles
}

TEST(GemmSplitK, DescribedAndBounded) {
  EXPECT_EQ(ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 4).describe(), "coop 64x64x32 warp 32x32 split 4");
  DeviceInfo d;
  d.sharedMemoryPerWorkgroup = 49152;
  d.maxWorkgroupInvocations = 1024;
  EXPECT_NE(ops::coopTileProblem(ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 65), d).find("split-K"),
            std::string::npos);
  EXPECT_EQ(ops::coopTileProblem(ops::GemmTile::coopTile(64, 64, 32, 2, 2, false, 8), d), "");
}

// Every A mode, with and without split-K (fp32 and fp16 partials), double buffering and fp16 accumulators, and
// the sum launch of either partials: compiled on any machine (the split kernels run only on tensor-core devices).
TEST(GemmSplitK, RealKernelsCompileToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-gemm-split-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  // Parameter words after the 32-word GEMM header: A (mode 0) at 32, the sink at 39.
  for (int aMode : {0, 1, 2, 5})
    for (int split : {1, 3})
      for (int variant = 0; variant < 4; ++variant) {  // 64x64, 128x128, + double buffer, + fp16 accumulators
        ops::GemmTile tile = variant == 0 ? ops::GemmTile::coopTile(64, 64, 32, 2, 2)
                                          : ops::GemmTile::coopTile(128, 128, 32, 4, 4);
        tile.doubleBuffer = variant >= 2;
        tile.f16Accumulators = variant == 3;
        tile.splitK = split;
        KernelSource src;
        src.generated = ops::gemmWrapperSource(test::coopGemmInfo(aMode), tile, true);
        src.label = "gemm coop " + tile.describe() + " A mode " + std::to_string(aMode);
        test::expectCompiles(compiler, src);
        if (split > 1 && variant < 2) {  // split-K partials stored in fp16 (SPLIT = 2)
          ops::GemmInfo half = test::coopGemmInfo(aMode);
          half.halfPartials = true;
          src.generated = ops::gemmWrapperSource(half, tile, true);
          src.label += " fp16 partials";
          test::expectCompiles(compiler, src);
        }
      }
  // A mode 4 (Winograd F(2,3)'s V made while staging; no split-K, fp32 accumulators).
  for (bool big : {false, true}) {
    const ops::GemmTile tile = big ? ops::GemmTile::coopTile(128, 128, 32, 4, 2) : ops::GemmTile::coopTile(64, 64, 32, 2, 2);
    KernelSource src;
    src.generated = ops::gemmWrapperSource(test::coopGemmInfo(4), tile, false);
    src.label = "gemm coop " + tile.describe() + " A mode 4";
    test::expectCompiles(compiler, src);
  }
  for (bool vector : {true, false})
    for (bool halfPartials : {false, true}) {
      ops::GemmInfo info;
      info.sinkType = "BufSink<39,F16Storage>";
      info.vectorOut = vector;
      info.halfPartials = halfPartials;
      KernelSource src;
      src.generated = ops::gemmSplitSumSource(info, vector);
      src.label = std::string("gemm split-K sum") + (vector ? " vector" : " scalar") + (halfPartials ? " fp16" : "");
      test::expectCompiles(compiler, src, false);
    }
  // The sum that also writes a layer norm (gemmSplitNormMain) in the layouts of 32-wide subgroups: SDXL's 1280 and
  // 640 channels (8 rows per workgroup, 10 and 5 quads per lane), the source, gamma and beta at words 40-42.
  for (int quads : {10, 5}) {
    ops::GemmInfo info;
    info.sinkType = "BufSink<39,F16Storage>";
    info.vectorOut = info.halfPartials = true;
    KernelSource src;
    src.generated = ops::gemmSplitNormSource(info, true, "Buf<40,F16Storage,1,0>", "Buf<44,F32Storage,1,0>",
                                             "Buf<48,F32Storage,1,0>", DType::F16, {8, quads}, 52, 54);
    src.label = "gemm split-K sum with a layer norm, " + std::to_string(quads) + " quads per lane";
    test::expectCompiles(compiler, src, false);
    // ... and its workgroup-per-row form (SDGEN_SPLIT_SUM_NORM=2): 320 and 160 invocations.
    src.generated = ops::gemmSplitNormSource(info, true, "Buf<40,F16Storage,1,0>", "Buf<44,F32Storage,1,0>",
                                             "Buf<48,F32Storage,1,0>", DType::F16, {}, 52, 54, 32 * quads);
    src.label = "gemm split-K sum with a layer norm, a workgroup of " + std::to_string(32 * quads) + " per row";
    test::expectCompiles(compiler, src, false);
  }
  std::filesystem::remove_all(cache);
}

// The GEMM header's row divisors (words 28-31, rowCoord): (n * multiplier) >> shift is n / d for every row index
// 0 <= n < 2^31, at the edges of each divisor's range and at random; a divisor outside 1..2^31 - 1 is refused.
TEST(GemmHeader, RowDivisionMagicIsExact) {
  std::mt19937 rng(25);
  std::vector<uint32_t> divisors = {1, 2, 3, 7, 8, 9, 64, 77, 1023, 1024, 1025, 4096, 65535, (1u << 20) + 3,
                                    (1u << 30) - 1, 1u << 30, (1u << 31) - 1};
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + rng() % ((1u << 31) - 1));
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + rng() % 5000);
  for (uint32_t d : divisors) {
    const ops::DivisionMagic m = ops::divisionMagic(d);
    std::vector<uint32_t> ns = {0, 1, d - 1, d, (1u << 31) - 1, (1u << 31) - 2, (1u << 31) - 1 - (1u << 31) % d};
    if (d < (1u << 30)) ns.push_back(d + 1);
    for (int i = 0; i < 50; ++i) ns.push_back(rng() % (1u << 31));
    for (uint32_t n : ns)
      ASSERT_EQ(uint32_t((uint64_t(n) * m.multiplier) >> m.shift), n / d) << n << " / " << d;
  }
  EXPECT_THROW(ops::divisionMagic(0), Error);
  EXPECT_THROW(ops::divisionMagic(int64_t(1) << 31), Error);
  EXPECT_THROW(ops::divisionMagic(-3), Error);
  EXPECT_THROW(ops::divisionMagic((int64_t(1) << 32) + 5), Error);  // not truncated to 5
}

}  // namespace
}  // namespace sdgen
