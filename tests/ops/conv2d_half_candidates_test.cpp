// The fp16-accumulator conv candidates (ops/conv2d_candidates.cpp) on an H100-like device: which problems get the
// 256x256 tile in K parts (one wave, several waves), the 128x128 tile with fp16 accumulators and the opt-in 256x128
// tile, their knobs, and the refusals by name (more than 2048 of K per part, no f16 -> f16 shape). Split from
// conv2d_tune_test.cpp (the tuner, its cache and its timings).
#include <algorithm>
#include <string>
#include <vector>

#include "ops/conv2d_candidates.h"
#include "ops/conv2d_weights.h"
#include "tests/ops/gemm_coop_test_support.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using ops::ConvAlgo;
using ops::ConvTile;

class ConvHalfCandidatesTest : public test::VulkanTest {
 protected:
  // fp16 weights of a 3x3 conv with `channels` in and out, and its problem on one `size` x `size` image (the VAE's
  // 512-channel layers: the large-tile candidates' bucket).
  ops::Conv2dWeights halfWeights3x3(int channels) {
    ops::Conv2dWeightsOptions o;
    o.storage = DType::F16;
    return ops::Conv2dWeights::allocate(ctx(), channels, channels, ops::Conv2dParams::square(3), o);
  }
  static ops::ConvProblem square3x3(int size, int channels) {
    ops::ConvProblem p;
    p.n = 1, p.h = p.ho = p.w = p.wo = size, p.cin = p.cout = channels;
    p.p = ops::Conv2dParams::square(3);
    return p;
  }
  // The names of the candidates of `prob` whose tile is bm x bn.
  static std::vector<std::string> tileNames(const ops::ConvProblem& prob, const ops::ConvContext& c, int bm, int bn) {
    std::vector<std::string> names;
    for (auto& cand : ops::convCandidates(prob, c))
      if (cand.algo == ConvAlgo::Coop && cand.tile.bm == bm && cand.tile.bn == bn && !cand.halo)  // halo: its own test
        names.push_back(cand.name());
    return names;
  }
};

// The 256x256 fp16-accumulator tile in K parts (session 37; a default candidate since 38, SDGEN_CONV_HALF_SPLIT=0
// leaves it out): only where its tiles in 2-8 parts fill 60-100 % of one wave (132 SMs) with <= 2048 of K per part,
// and only with the f16 -> f16 shape. The VAE's 512 channels at 64^2 (32 tiles, K 4608): 3 parts of 1536 (96
// workgroups) and 4 of 1152 (128).
TEST_F(ConvHalfCandidatesTest, HalfTileSplitCandidate) {
  const DeviceInfo d = test::h100LikeWithHalfAccumulators();
  auto w = halfWeights3x3(512);
  const ops::ConvProblem p = square3x3(64, 512);
  const ops::ConvContext cc{d, w, true, {}, true};
  auto halfNames = [&](const ops::ConvProblem& prob, const ops::ConvContext& c) {
    std::vector<std::string> names;
    for (auto& cand : ops::convCandidates(prob, c))
      if (cand.algo == ConvAlgo::Coop && cand.tile.bm == 256 && cand.tile.bn == 256) names.push_back(cand.name());
    return names;
  };
  {
    test::ScopedEnv off("SDGEN_CONV_HALF_SPLIT", "0");
    EXPECT_TRUE(halfNames(p, cc).empty());
  }
  test::ScopedEnv on("SDGEN_CONV_HALF_SPLIT", nullptr);  // on by default since session 38
  EXPECT_EQ(halfNames(p, cc), (std::vector<std::string>{"coop 256x256 split 3", "coop 256x256 split 4"}));
  for (const std::string& n : halfNames(p, cc)) EXPECT_EQ(ops::candidateViolation(*ops::parseConvCandidate(n), p, cc), "");
  ops::ConvProblem big = p;  // 128^2: 128 tiles, so two parts would be two waves
  big.h = big.ho = big.w = big.wo = 128;
  {
    test::ScopedEnv off("SDGEN_CONV_HALF_WAVES", "0");
    EXPECT_TRUE(halfNames(big, cc).empty());
  }
  {
    // Over several waves (session 39, default; SDGEN_CONV_HALF_WAVES=0 leaves it out): the fewest parts of <= 2048 of K and one more, where
    // the last wave is >= 3/4 full. 128^2: 3 parts (384 workgroups, last wave 120 of 132) and 4 (512, 116); 256
    // channels at 256^2 (K 2304, 256 tiles): 2 (512) and 3 (768, 108); 64^2 keeps its one-wave parts only; K <= 2048
    // (128 channels in, 256^2) unsplit and in 2 parts; without scratch memory only unsplit.
    test::ScopedEnv waves("SDGEN_CONV_HALF_WAVES", nullptr);
    EXPECT_EQ(halfNames(big, cc), (std::vector<std::string>{"coop 256x256 split 3", "coop 256x256 split 4"}));
    auto w256 = halfWeights3x3(256);
    EXPECT_EQ(halfNames(square3x3(256, 256), {d, w256, true, {}, true}),
              (std::vector<std::string>{"coop 256x256 split 2", "coop 256x256 split 3"}));
    EXPECT_EQ(halfNames(p, cc), (std::vector<std::string>{"coop 256x256 split 3", "coop 256x256 split 4"}));
    ops::ConvProblem shallow = square3x3(256, 256);
    shallow.cin = 128;
    ops::Conv2dWeightsOptions o;
    o.storage = DType::F16;
    auto w128 = ops::Conv2dWeights::allocate(ctx(), 256, 128, ops::Conv2dParams::square(3), o);
    EXPECT_EQ(halfNames(shallow, {d, w128, true, {}, true}), (std::vector<std::string>{"coop 256x256", "coop 256x256 split 2"}));
    EXPECT_EQ(halfNames(shallow, {d, w128, false, {}, true}), (std::vector<std::string>{"coop 256x256"}));
    for (const std::string& n : halfNames(big, cc)) EXPECT_EQ(ops::candidateViolation(*ops::parseConvCandidate(n), big, cc), "");
    // From 8 waves whatever the last wave (session 42): 512 channels at 256^2 (512 tiles, K 4608: 3 parts = 1536
    // workgroups, 11.6 waves, the last 84 of 132; 4 parts = 2048) and 256 channels at 512^2 (1024 tiles, K 2304:
    // 2 parts = 2048, 15.5 waves; 3 = 3072).
    // From 3 waves of tiles, also unsplit, K in even fp16 chunks of <= 2048 flushed to planes (not without scratch).
    EXPECT_EQ(halfNames(square3x3(256, 512), cc),
              (std::vector<std::string>{"coop 256x256 split 3", "coop 256x256 split 4", "coop 256x256"}));
    EXPECT_EQ(halfNames(square3x3(512, 256), {d, w256, true, {}, true}),
              (std::vector<std::string>{"coop 256x256 split 2", "coop 256x256 split 3", "coop 256x256"}));
    EXPECT_EQ(ops::candidateViolation({ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, 1}, square3x3(256, 512), cc), "");
    // Its chunks: the fewest of <= 2048, as even as whole 32-deep slices allow; none within one chunk or in parts.
    const ops::GemmTile unsplit = ops::convCoopGemmTile({ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, 1});
    EXPECT_EQ(ops::halfTileFlushK(unsplit, 2304), 1152);
    EXPECT_EQ(ops::halfTileFlushK(unsplit, 4608), 1536);
    EXPECT_EQ(ops::halfTileFlushK(unsplit, 2080), 1056);  // 65 slices: 33 + 32
    EXPECT_EQ(ops::halfTileFlushK(unsplit, 2048), 0);
    EXPECT_EQ(ops::halfTileFlushK(ops::convCoopGemmTile({ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, 3}), 4608), 0);
    EXPECT_EQ(ops::halfTileFlushK(ops::convCoopGemmTile({ConvAlgo::Coop, ConvTile{256, 128, 0, 0}, 1}), 4608), 0);
    EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, 1}, square3x3(256, 512), {d, w, false, {}, true})
                  .find("needs scratch memory"),
              std::string::npos);
  }
  DeviceInfo noHalf = d;
  noHalf.coopMatrixShapes.pop_back();
  EXPECT_TRUE(halfNames(p, {noHalf, w, true, {}, true}).empty());
  {
    // The 128x128 tile with fp16 accumulators (session 39, default; SDGEN_CONV_HALF_128=0 leaves it out): unsplit
    // where K <= 2048 (128 channels: K 1152), else in the fewest parts of <= 2048 (K 4608: 3) but not 2 (K 2304:
    // none); only with the f16 -> f16 shape; forced with more than 2048 of K per part, refused by name.
    auto count128 = [&](const ops::ConvProblem& prob, const ops::ConvContext& c) {
      std::vector<std::string> names;
      for (auto& cand : ops::convCandidates(prob, c))
        if (cand.halfAccumulators && !cand.halo) names.push_back(cand.name());  // halo: conv2d_coop_halo_test.cpp
      return names;
    };
    {
      test::ScopedEnv off("SDGEN_CONV_HALF_128", "0");
      EXPECT_TRUE(count128(p, cc).empty());
    }
    test::ScopedEnv half128("SDGEN_CONV_HALF_128", nullptr);
    EXPECT_EQ(count128(p, cc), (std::vector<std::string>{"coop 128x128 f16acc split 3"}));
    auto w256 = halfWeights3x3(256);
    EXPECT_TRUE(count128(square3x3(256, 256), {d, w256, true, {}, true}).empty());
    auto w128 = halfWeights3x3(128);
    const ops::ConvProblem shallow = square3x3(512, 128);
    EXPECT_EQ(count128(shallow, {d, w128, true, {}, true}), (std::vector<std::string>{"coop 128x128 f16acc"}));
    EXPECT_TRUE(count128(shallow, {noHalf, w128, true, {}, true}).empty());
    EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true}, p, cc).find("at most 2048"),
              std::string::npos);
    EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true}, shallow,
                                      {noHalf, w128, true, {}, true}).find("f16 -> f16"),
              std::string::npos);
  }
  // Forced with more than 2048 of K per part (4608 in 2 parts): refused, naming the limit.
  EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, 2}, p, cc).find("at most 2048 of K per part"),
            std::string::npos);
}

// The 256x128 tile with fp16 accumulators (session 40; a default since session 41, SDGEN_CONV_HALF_256x128=0 off):
// where Cout is a multiple of 128 and M >= 8192, in the fewest parts of <= 2048 of K and one more (split only with
// scratch memory); only with the f16 -> f16 shape. The VAE's 128 channels at 512^2 (K 1152): unsplit and in 2 parts;
// its 256 -> 128 conv (K 2304): 2 and 3 parts; 320 channels (SDXL's 128^2 level): none.
TEST_F(ConvHalfCandidatesTest, Wide256x128Candidate) {
  const DeviceInfo d = test::h100LikeWithHalfAccumulators();
  auto w128 = halfWeights3x3(128);
  const ops::ConvProblem p = square3x3(512, 128);
  const ops::ConvContext cc{d, w128, true, {}, true};
  {
    test::ScopedEnv off("SDGEN_CONV_HALF_256x128", "0");
    EXPECT_TRUE(tileNames(p, cc, 256, 128).empty());
  }
  test::ScopedEnv on("SDGEN_CONV_HALF_256x128", nullptr);  // a default
  EXPECT_EQ(tileNames(p, cc, 256, 128), (std::vector<std::string>{"coop 256x128", "coop 256x128 split 2"}));
  EXPECT_EQ(tileNames(p, {d, w128, false, {}, true}, 256, 128), (std::vector<std::string>{"coop 256x128"}));
  ops::Conv2dWeightsOptions o;
  o.storage = DType::F16;
  auto w256to128 = ops::Conv2dWeights::allocate(ctx(), 128, 256, ops::Conv2dParams::square(3), o);
  ops::ConvProblem wide = p;
  wide.cin = 256;
  EXPECT_EQ(tileNames(wide, {d, w256to128, true, {}, true}, 256, 128),
            (std::vector<std::string>{"coop 256x128 split 2", "coop 256x128 split 3"}));
  for (const std::string& n : tileNames(wide, {d, w256to128, true, {}, true}, 256, 128))
    EXPECT_EQ(ops::candidateViolation(*ops::parseConvCandidate(n), wide, {d, w256to128, true, {}, true}), "") << n;
  auto w320 = halfWeights3x3(320);
  EXPECT_TRUE(tileNames(square3x3(128, 320), {d, w320, true, {}, true}, 256, 128).empty());
  EXPECT_TRUE(tileNames(square3x3(64, 128), cc, 256, 128).empty());  // 4096 rows
  DeviceInfo noHalf = d;
  noHalf.coopMatrixShapes.pop_back();
  EXPECT_TRUE(tileNames(p, {noHalf, w128, true, {}, true}, 256, 128).empty());
  EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{256, 128, 0, 0}, 1}, wide, {d, w256to128, true, {}, true})
                .find("at most 2048 of K per part"),
            std::string::npos);
  EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{256, 128, 0, 0}, 1}, p, {noHalf, w128, true, {}, true})
                .find("f16 -> f16"),
            std::string::npos);
}


// The 256x160 tile with fp16 accumulators (session 40; a default since session 41, SDGEN_CONV_HALF_256x160=0 off):
// where Cout is a multiple of 160 but not of 256 and M >= 8192. SDXL's 128^2 level (320 channels, K 2880): 2 and 3
// parts; its 64^2 level (640, K 5760): 3 and 4; 1280 channels (the 256x256 tile's): none.
TEST_F(ConvHalfCandidatesTest, Wide256x160Candidate) {
  const DeviceInfo d = test::h100LikeWithHalfAccumulators();
  auto w320 = halfWeights3x3(320);
  ops::ConvProblem p = square3x3(128, 320);
  p.n = 2;
  const ops::ConvContext cc{d, w320, true, {}, true};
  {
    test::ScopedEnv off("SDGEN_CONV_HALF_256x160", "0");
    EXPECT_TRUE(tileNames(p, cc, 256, 160).empty());
  }
  test::ScopedEnv on("SDGEN_CONV_HALF_256x160", nullptr);  // a default
  EXPECT_EQ(tileNames(p, cc, 256, 160), (std::vector<std::string>{"coop 256x160 split 2", "coop 256x160 split 3"}));
  auto w640 = halfWeights3x3(640);
  ops::ConvProblem mid = square3x3(64, 640);
  mid.n = 2;
  EXPECT_EQ(tileNames(mid, {d, w640, true, {}, true}, 256, 160),
            (std::vector<std::string>{"coop 256x160 split 3", "coop 256x160 split 4"}));
  for (const std::string& n : tileNames(mid, {d, w640, true, {}, true}, 256, 160))
    EXPECT_EQ(ops::candidateViolation(*ops::parseConvCandidate(n), mid, {d, w640, true, {}, true}), "") << n;
  auto w1280 = halfWeights3x3(1280);
  ops::ConvProblem deep = square3x3(64, 1280);
  deep.n = 2;
  EXPECT_TRUE(tileNames(deep, {d, w1280, true, {}, true}, 256, 160).empty());
  EXPECT_TRUE(tileNames(p, {d, w320, false, {}, true}, 256, 160).empty());  // K 2880 needs parts: scratch
}

}  // namespace
}  // namespace sdgen
