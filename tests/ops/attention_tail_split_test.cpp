// The accumulator-softmax attention's tail split (ops::chooseAttentionTailSplit, flash_coop2.slang TAIL_WORD and
// flashCoop2TailCombine): the rule on SDXL's self-attention shapes for an H200-like device, and the kernels on
// software matrices (AttentionOptions::coopEmulation) with the split forced, against float64 and against the same
// attention unsplit: whole units, parts of several key blocks, a masked last block, the ones column (D 40), two
// batches and heads; and the refusals.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/slang_compiler.h"
#include "ops/attention.h"
#include "ops/attention_coop.h"
#include "ops/conv2d_scratch.h"
#include "tests/ops/attention_fixture.h"
#include "tests/ops/gemm_coop_test_support.h"

namespace sdgen {
namespace {

using namespace graph;

// SDXL's D-64 self-attention tile (the rule's: 8 subgroups of 16 rows, 32-key blocks, two per SM by shared memory).
ops::FlashCoopTile sdxlTile() { return *ops::chooseFlashCoop2Tile(64, 1024, 1024, 49152, 1024); }

TEST(AttentionTailSplitRule, SdxlSelfAttentionShapes) {
  DeviceInfo d = test::h100Like();
  const ops::FlashCoopTile t = sdxlTile();
  {
    test::ScopedEnv off("SDGEN_ATTENTION_TAIL_SPLIT", nullptr);  // opt-in
    EXPECT_FALSE(ops::chooseAttentionTailSplit(t, 320, 1024, d));
  }
  test::ScopedEnv on("SDGEN_ATTENTION_TAIL_SPLIT", "1");
  // 32^2: B 2 x H 20 x 8 query tiles = 320 units for 264 slots: 264 whole, 56 in 4 parts of 256 keys.
  std::optional<ops::AttentionTailSplit> s = ops::chooseAttentionTailSplit(t, 320, 1024, d);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->whole, 264);
  EXPECT_EQ(s->tails, 56);
  EXPECT_EQ(s->parts, 4);
  EXPECT_EQ(s->keysPerPart, 256);
  // 64^2: 640 units, 2.4 waves: 528 whole, 112 in 2 parts of 2048 keys.
  s = ops::chooseAttentionTailSplit(t, 640, 4096, d);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->whole, 528);
  EXPECT_EQ(s->tails, 112);
  EXPECT_EQ(s->parts, 2);
  EXPECT_EQ(s->keysPerPart, 2048);
  // Kept whole: one wave or less, a last wave over half full, no SM count, the other kernel.
  EXPECT_FALSE(ops::chooseAttentionTailSplit(t, 264, 1024, d));
  EXPECT_FALSE(ops::chooseAttentionTailSplit(t, 400, 1024, d));
  DeviceInfo unknown = d;
  unknown.multiprocessors = 0;
  EXPECT_FALSE(ops::chooseAttentionTailSplit(t, 320, 1024, unknown));
  ops::FlashCoopTile v1 = t;
  v1.accumulatorSoftmax = false;
  EXPECT_FALSE(ops::chooseAttentionTailSplit(v1, 320, 1024, d));
  // Parts normalized so that none is empty: 6 key blocks of 32 in 4 parts are 3 parts of two; one block is no split.
  EXPECT_EQ(ops::makeAttentionTailSplit(t, 10, 6, 4, 192)->parts, 3);
  EXPECT_EQ(ops::makeAttentionTailSplit(t, 10, 6, 4, 192)->keysPerPart, 64);
  EXPECT_FALSE(ops::makeAttentionTailSplit(t, 10, 6, 4, 32));
  EXPECT_FALSE(ops::makeAttentionTailSplit(t, 10, 10, 2, 1024));  // no tail
}

// Host-only: the tail kernel (TAIL_WORD) and its combine launch compiled to SPIR-V for tensor cores, SDXL's tile and
// the ones column's D 40 (the H200 runs them in s40-a's tests).
TEST(AttentionTailSplitRule, KernelsCompileToSpirv) {
  const std::filesystem::path cache = std::filesystem::temp_directory_path() / "sdgen-attention-tail-compile-test";
  std::filesystem::remove_all(cache);
  SlangCompiler compiler(defaultSlangc(), defaultShaderDir(), cache.string());
  for (const ops::FlashCoopTile& t : {sdxlTile(), *ops::chooseFlashCoop2Tile(40, 4096, 4096, 49152, 1024)}) {
    KernelSource src;
    src.generated = ops::flashCoopWrapperSource(t, "Buf<20,F16Storage,1,0>", "Buf<27,F16Storage,1,0>",
                                                "Buf<34,F16Storage,1,0>", "BufSink<41,F16Storage>", true, false, true,
                                                48);
    src.capabilities = ops::flashCoopCapabilities(t);
    src.label = "flash coop2 tail split " + t.describe();
    std::vector<uint32_t> spirv;
    EXPECT_NO_THROW(spirv = compiler.compile(src)) << src.label;
    EXPECT_GT(spirv.size(), 100u) << src.label;
    src.generated = ops::flashCoop2CombineSource(t, "BufSink<41,F16Storage>", true, 48);
    src.capabilities = {};
    src.label = "flash coop2 tail combine " + t.describe();
    EXPECT_NO_THROW(spirv = compiler.compile(src)) << src.label;
    EXPECT_GT(spirv.size(), 100u) << src.label;
  }
  EXPECT_THROW(ops::flashCoopWrapperSource(ops::makeFlashCoopTile(64, {32, 1, 4}), "Q", "K", "V", "O", true, false,
                                           false, 48),
               Error);
  std::filesystem::remove_all(cache);
}

class AttentionTailSplitTest : public test::AttentionFixture {
 protected:
  // The attention with the tail split forced (whole units, parts) beside the same attention unsplit: both against
  // float64 (the fixture's run), and against each other.
  void both(const Problem& p, int64_t whole, int parts, const std::string& what, int expectParts = 0) {
    auto blocks = ops::FlashCoopBlocks{32, 1, 1, false, true};
    ops::AttentionOptions o{.coopBlocks = blocks, .coopEmulation = true};
    o.scratch = &scratch_;
    TensorView unsplit = output(p.q.shape()), split = output(p.q.shape());
    {
      CommandSequence seq(ctx());
      EXPECT_FALSE(ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(unsplit), o).tailSplit) << what;
      seq.run();
    }
    o.tailSplit = std::pair<int64_t, int>{whole, parts};
    CommandSequence seq(ctx());
    const ops::AttentionInfo info = ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(split), o);
    EXPECT_EQ(seq.dispatchCount(), 2u) << what;  // the attention and its combine launch
    seq.run();
    ASSERT_TRUE(info.tailSplit) << what;
    EXPECT_EQ(info.tailSplit->parts, expectParts ? expectParts : parts) << what;
    const std::vector<float> a = read(unsplit), b = read(split);
    compare(b, reference(p.q, p.k, p.v, false), what + ", tail split");
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
    EXPECT_LE(worst, 4e-3) << what << ": the split and unsplit attentions differ";
    std::printf("%s: tail split %lld whole + %lld x %d parts, max |split - unsplit| %.3g\n", what.c_str(),
                (long long)info.tailSplit->whole, (long long)info.tailSplit->tails, info.tailSplit->parts, worst);
  }
  ops::Conv2dScratch scratch_{ctx()};
};

TEST_P(AttentionTailSplitTest, PartsMergeToTheWholeAttention) {
  coopTolerance_ = true;
  // D 64, 96 keys in 3 blocks of 32: 2 x 4 query tiles of 16 rows (8 units), the last 3 in 3 parts of one block.
  both(dense(1, 64, 96, 2, 64, 4500), 5, 3, "D 64, 3 parts of 32 keys");
  // 77 keys (a masked last block) in 2 parts of 2 blocks, Sq off the tile, two batches; D 40 (the ones column).
  both(dense(2, 40, 77, 1, 40, 4510), 2, 2, "D 40, masked, 2 parts");
  // More parts than key blocks: normalized to one block each.
  both(dense(1, 32, 64, 1, 64, 4520), 0, 4, "D 64, every unit split, 4 parts of 2 blocks -> 2", 2);
}

TEST_P(AttentionTailSplitTest, Refusals) {
  Problem p = dense(1, 32, 64, 1, 64, 4530);
  TensorView out = output(p.q.shape());
  CommandSequence seq(ctx());
  ops::AttentionOptions o{.coopBlocks = ops::FlashCoopBlocks{32, 1, 1, false, true}, .coopEmulation = true};
  o.tailSplit = std::pair<int64_t, int>{0, 2};
  test::expectErrorContaining([&] { ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out), o); },
                              "a tail split needs the accumulator-softmax kernel, no causal mask and scratch memory");
  o.scratch = &scratch_;
  o.tailSplit = std::pair<int64_t, int>{2, 2};  // 2 units: none left
  test::expectErrorContaining([&] { ops::attention(ctx(), seq, p.q, p.k, p.v, bufferSink(out), o); },
                              "leaves no tail in 2 parts");
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionTailSplitTest, ::testing::Values(DType::F16),
                         [](const auto& info) { return std::string(dtypeName(info.param)); });

}  // namespace
}  // namespace sdgen
