// The convolution autotune (ops/conv2d_tune.h): candidate names and lists, selection among injected timings
// (a fake timer: deterministic, and it counts the tuning launches), the fallbacks when the fastest candidate's
// contract fails for a layer, the persistent cache (hit, miss, corrupt, truncated, oversized, other device,
// other version, stale entries, unwritable directory, --retune), the Winograd packing decision, that a tuned
// plan computes what the rule's does (float64 reference), and one real timing run on this device.
#include <unistd.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "engine/command_sequence.h"
#include "engine/file_util.h"
#include "graph/expr.h"
#include "ops/conv2d.h"
#include "ops/conv2d_candidates.h"
#include "ops/conv2d_tune.h"
#include "ops/linear_gemm.h"
#include "tests/graph/reference_eval.h"
#include "tests/ops/conv2d_reference.h"
#include "tests/ops/conv2d_tune_test_support.h"
#include "tests/ops/gemm_coop_test_support.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using namespace tunetest;  // FakeTimer, ConvTuneTest, fs, ConvAlgo, ConvCandidate, ConvTile (conv2d_tune_test_support.h)

TEST(ConvCandidates, NamesRoundTrip) {
  const std::vector<ConvCandidate> all = {
      {ConvAlgo::General},
      {ConvAlgo::Direct},
      {ConvAlgo::GemmV2, ops::findConvTile(128, 128)},
      {ConvAlgo::Winograd, ops::findConvTile(256, 16)},
      {ConvAlgo::GemmV2, ConvTile::lanesTile(4, 1)},
      {ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1},
      {ConvAlgo::Coop, ConvTile{64, 64, 0, 0}, 8},
      {ConvAlgo::CoopWinograd, ConvTile{128, 128, 0, 0}, 1},
      {ConvAlgo::Coop, ConvTile{256, 256, 0, 0}, 4},
      {ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 1, true},
      {ConvAlgo::Coop, ConvTile{128, 128, 0, 0}, 3, true},
  };
  for (const ConvCandidate& c : all) {
    std::optional<ConvCandidate> back = ops::parseConvCandidate(c.name());
    ASSERT_TRUE(back) << c.name();
    EXPECT_TRUE(*back == c) << c.name() << " -> " << back->name();
  }
  EXPECT_EQ(all[6].name(), "coop 64x64 split 8");
  EXPECT_EQ(all[4].name(), "gemm-v2 32x32 lanes");
  EXPECT_EQ(all[7].name(), "coop-winograd 128x128");
  EXPECT_EQ(all[9].name(), "coop 128x128 f16acc");
  EXPECT_EQ(all[10].name(), "coop 128x128 f16acc split 3");
  for (const char* bad : {"", "auto", "coop", "coop 96x96", "coop 64x64 split", "coop 64x64 split 1", "coop 64x64 split x",
                          "winograd 64x64 split 2", "gemm-v2 7x9", "gemm-v2 64x64 extra", "direct 16x16",
                          "general general", "gemm-v2 24x32 lanes", "winograd -64x64", "coop-winograd",
                          "coop-winograd 96x96", "coop-winograd 64x64 split 2", "coop-winograd fused",
                          "coop-winograd fused 32x32", "coop-winograd fused 64x32 f16acc",  // removed in session 39
                          "coop 64x64 f16acc", "coop 256x256 f16acc", "coop 128x128 split 2 f16acc",
                          "coop 128x128 f16acc split", "coop 128x128 f16acc f16acc", "coop-winograd 128x128 f16acc",
                          "coop-winograd fused 64x64", "coop-winograd fused 32x32 split 2", "coop-winograd fused 32x32 f16",
                          "coop-winograd 256x160", "coop-winograd 256x256 split 2",
                          "coop-winograd 32x32 f16acc", "coop fused", "direct fused"})
    EXPECT_FALSE(ops::parseConvCandidate(bad)) << bad;
}

// A device with tensor cores (as the H100 reports them): coop tiles and split-K join the candidates.
TEST_F(ConvTuneTest, CandidatesOnTensorCores) {
  DeviceInfo d;
  d.type = "discrete";
  d.coopMatrixKHR = true;
  d.subgroupSize = 32;
  d.sharedMemoryPerWorkgroup = 49152;
  d.maxWorkgroupInvocations = 1024;
  for (auto& m : d.maxWorkgroupCount) m = 65535;
  d.coopMatrixShapes = {{16, 16, 16, "f16", "f16", "f32", "f32", "subgroup"}};
  ops::Conv2dWeightsOptions o;
  o.storage = DType::F16;
  auto w = ops::Conv2dWeights::allocate(ctx(), 1280, 1280, ops::Conv2dParams::square(3), o);
  ops::ConvProblem p;  // the UNet's 8x8 level: 128 rows, K 11520: few tiles, a deep K
  p.n = 2, p.h = 8, p.w = 8, p.cin = 1280, p.ho = 8, p.wo = 8, p.cout = 1280;
  p.p = ops::Conv2dParams::square(3);
  const ops::ConvContext cc{d, w, true, {}, true};
  std::vector<ConvCandidate> list = ops::convCandidates(p, cc);
  std::vector<std::string> names;
  for (auto& c : list) names.push_back(c.name());
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  EXPECT_TRUE(has("coop 128x128")) << ::testing::PrintToString(names);
  EXPECT_TRUE(has("coop 64x64"));
  EXPECT_TRUE(has("coop 64x64 split 2"));
  EXPECT_TRUE(has("coop 64x64 split 16"));
  EXPECT_FALSE(has("direct"));  // Cout 1280
  for (const std::string& n : names) {  // CUDA-core algorithms lost every such row to the coop tiles
    EXPECT_NE(n.rfind("gemm-v2", 0), 0u) << "CUDA-core GEMM next to tensor cores";
    EXPECT_NE(n.rfind("winograd", 0), 0u) << "CUDA-core Winograd next to tensor cores";
  }
  // 128x128 tiles split in 8, 16 or 32 parts (360 slices: 32 -> 30 parts of 12), not without SDGEN_CONV_WIDE_SPLIT.
  for (const char* n : {"coop 128x128 split 8", "coop 128x128 split 16", "coop 128x128 split 30"})
    EXPECT_TRUE(has(n)) << n << ": " << ::testing::PrintToString(names);
  EXPECT_FALSE(has("coop 128x128 split 3"));  // 10 tiles: 3 parts only from 100
  EXPECT_FALSE(has("coop 128x64"));           // Cout a multiple of 128
  EXPECT_LE(list.size(), 12u);
  setenv("SDGEN_CONV_WIDE_SPLIT", "0", 1);
  const size_t withoutWide = ops::convCandidates(p, cc).size();
  unsetenv("SDGEN_CONV_WIDE_SPLIT");
  EXPECT_EQ(withoutWide, list.size() - 3);
  for (auto& c : list) EXPECT_EQ(ops::candidateViolation(c, p, cc), "") << c.name();
  std::optional<ConvCandidate> rule = ops::ruleCandidate(p, cc);
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->algo, ConvAlgo::Coop);
  EXPECT_TRUE(has(rule->name())) << rule->name();
  // Without scratch memory split-K is no candidate; fp32 weights have no coop at all.
  const ops::ConvContext noScratch{d, w, false, {}, true};
  for (auto& c : ops::convCandidates(p, noScratch)) EXPECT_EQ(c.splitK, 1) << c.name();
  EXPECT_NE(ops::candidateViolation({ConvAlgo::Coop, ConvTile{64, 64, 0, 0}, 4}, p, noScratch).find("scratch"),
            std::string::npos);
  // The VAE's 512^2 layers: many tiles, no split-K (this device has no f16 -> f16 shape: no fp16-accumulator tiles;
  // the fp32 halo tile, session 45).
  auto w128 = ops::Conv2dWeights::allocate(ctx(), 128, 128, ops::Conv2dParams::square(3), o);
  ops::ConvProblem vae = p;
  vae.n = 1, vae.h = vae.ho = vae.w = vae.wo = 512, vae.cin = vae.cout = 128;
  std::vector<std::string> vaeNames;
  for (auto& c : ops::convCandidates(vae, {d, w128, true, {}, true})) vaeNames.push_back(c.name());
  // (and Winograd F(6,3) along the rows on its halo3 tile, session 47; SDGEN_CONV_WINOGRAD_ROWS=0 leaves it out)
  // (and, since session 58, the halo tile on a column of 3 taps per 16-channel step)
  EXPECT_EQ(vaeNames, (std::vector<std::string>{"coop 128x128", "coop 128x128 halo", "coop 128x128 halo3",
                                                "coop-winograd-rows 128x128 halo3", "coop 64x64"}));
  {
    test::ScopedEnv off("SDGEN_CONV_WINOGRAD_ROWS", "0");
    std::vector<std::string> without;
    for (auto& c : ops::convCandidates(vae, {d, w128, true, {}, true})) without.push_back(c.name());
    EXPECT_EQ(without, (std::vector<std::string>{"coop 128x128", "coop 128x128 halo", "coop 128x128 halo3", "coop 64x64"}));
  }
  // The VAE's 512 channels at 64^2 (M 4096, K 4608): 128 tiles of 128x128 under-fill the GPU, so they are also
  // timed with K split in 2, 3 and 4 (3 from 100 tiles: not at the 8x8 level above).
  auto w512 = ops::Conv2dWeights::allocate(ctx(), 512, 512, ops::Conv2dParams::square(3), o);
  ops::ConvProblem mid = vae;
  mid.h = mid.ho = mid.w = mid.wo = 64, mid.cin = mid.cout = 512;
  std::vector<std::string> midNames;
  for (auto& c : ops::convCandidates(mid, {d, w512, true, {}, true})) midNames.push_back(c.name());
  for (const char* n : {"coop 128x128", "coop 128x128 split 2", "coop 128x128 split 3", "coop 128x128 split 4", "coop 64x64"})
    EXPECT_NE(std::find(midNames.begin(), midNames.end(), n), midNames.end()) << n << ": " << ::testing::PrintToString(midNames);
  // SDXL's 128^2 level (320 channels, M 32768): the 128x64 tile too, which SD 1.5's 64^2 level (M 8192) also gets.
  auto w320 = ops::Conv2dWeights::allocate(ctx(), 320, 320, ops::Conv2dParams::square(3), o);
  ops::ConvProblem level = vae;
  level.n = 2, level.h = level.ho = level.w = level.wo = 128, level.cin = level.cout = 320;
  std::vector<std::string> levelNames;
  for (auto& c : ops::convCandidates(level, {d, w320, true, {}, true})) levelNames.push_back(c.name());
  EXPECT_NE(std::find(levelNames.begin(), levelNames.end(), "coop 128x64"), levelNames.end())
      << ::testing::PrintToString(levelNames);
  level.h = level.ho = level.w = level.wo = 32;  // M 2048: not
  levelNames.clear();
  for (auto& c : ops::convCandidates(level, {d, w320, true, {}, true})) levelNames.push_back(c.name());
  EXPECT_EQ(std::find(levelNames.begin(), levelNames.end(), "coop 128x64"), levelNames.end());
  // With fp16 accumulators (the f16 x f16 -> f16 shape): coop-winograd on the 256x256 fp16-accumulator tile for
  // the VAE's large 3x3 convs with 512 channels in (session 42), where Cout is a multiple of 256, from 2048 rows
  // (session 57; SDGEN_CONV_SMALL_WINOGRAD=0: from 16384, as before);
  // SDGEN_CONV_HALF_WINOGRAD=0 leaves it out, =1 adds 256x128 and Cin from 128; never past 2048 input channels
  // (K = Cin in one fp16 sum), nor where the weights carry upsample phase filters (coop's phase form runs those).
  DeviceInfo h = d;
  h.coopMatrixShapes.push_back({16, 16, 16, "f16", "f16", "f16", "f16", "subgroup"});
  auto namesOf = [&](const ops::ConvProblem& q, const ops::Conv2dWeights& wq) {
    std::vector<std::string> n;
    for (auto& c : ops::convCandidates(q, {h, wq, true, {}, true})) n.push_back(c.name());
    return n;
  };
  auto holds = [](const std::vector<std::string>& n, const char* what) {
    return std::find(n.begin(), n.end(), what) != n.end();
  };
  ops::ConvProblem big = mid;
  big.h = big.ho = big.w = big.wo = 256;
  std::vector<std::string> bigNames = namesOf(big, w512);
  EXPECT_TRUE(holds(bigNames, "coop-winograd 256x256")) << ::testing::PrintToString(bigNames);
  EXPECT_FALSE(holds(bigNames, "coop-winograd 256x128"));
  EXPECT_TRUE(holds(namesOf(mid, w512), "coop-winograd 256x256"));  // 4096 rows
  {
    test::ScopedEnv before("SDGEN_CONV_SMALL_WINOGRAD", "0");
    EXPECT_FALSE(holds(namesOf(mid, w512), "coop-winograd 256x256"));
  }
  ops::ConvProblem small = mid;
  small.h = small.ho = small.w = small.wo = 32;  // 1024 rows: 64 workgroups of 256x256, half the H100's SMs
  EXPECT_FALSE(holds(namesOf(small, w512), "coop-winograd 256x256"));
  auto w256 = ops::Conv2dWeights::allocate(ctx(), 256, 256, ops::Conv2dParams::square(3), o);
  ops::ConvProblem big256 = big;
  big256.cin = big256.cout = 256;
  EXPECT_FALSE(holds(namesOf(big256, w256), "coop-winograd 256x256"));  // 256 channels in: lost on the H100
  ops::Conv2dWeightsOptions withPhases = o;
  withPhases.packUpsamplePhases = true;
  auto upsampler = ops::Conv2dWeights::allocate(ctx(), 512, 512, ops::Conv2dParams::square(3), withPhases);
  EXPECT_NE(ops::candidateViolation({ConvAlgo::CoopWinograd, ConvTile{256, 256, 0, 0}, 1}, big, {h, upsampler, true, {}, true})
                .find("coop runs by output phases"),
            std::string::npos);
  {
    test::ScopedEnv off("SDGEN_CONV_HALF_WINOGRAD", "0");
    EXPECT_FALSE(holds(namesOf(big, w512), "coop-winograd 256x256"));
  }
  test::ScopedEnv halfWinograd("SDGEN_CONV_HALF_WINOGRAD", "1");
  bigNames = namesOf(big, w512);
  EXPECT_TRUE(holds(bigNames, "coop-winograd 256x128")) << ::testing::PrintToString(bigNames);
  EXPECT_TRUE(holds(namesOf(big256, w256), "coop-winograd 256x256"));
  std::vector<std::string> vaeHalf = namesOf(vae, w128);  // 512^2, 128 channels
  EXPECT_FALSE(holds(vaeHalf, "coop-winograd 256x256")) << ::testing::PrintToString(vaeHalf);
  EXPECT_TRUE(holds(vaeHalf, "coop-winograd 256x128"));
  auto w2560 = ops::Conv2dWeights::allocate(ctx(), 256, 2560, ops::Conv2dParams::square(3), o);
  ops::ConvProblem wide = big;
  wide.cin = 2560, wide.cout = 256;
  EXPECT_NE(ops::candidateViolation({ConvAlgo::CoopWinograd, ConvTile{256, 256, 0, 0}, 1}, wide, {h, w2560, true, {}, true})
                .find("at most 2048 input channels"),
            std::string::npos);
  EXPECT_FALSE(holds(namesOf(wide, w2560), "coop-winograd 256x256"));
  // Where coop cannot run (Cout 4 is not a multiple of 8: the UNet's conv_out), Winograd and GEMM v2 are timed.
  ops::Conv2dWeightsOptions both = o;
  auto out4 = ops::Conv2dWeights::allocate(ctx(), 4, 320, ops::Conv2dParams::square(3), both);
  ops::ConvProblem convOut = p;
  convOut.h = convOut.ho = convOut.w = convOut.wo = 64, convOut.cin = 320, convOut.cout = 4;
  std::vector<std::string> outNames;
  for (auto& c : ops::convCandidates(convOut, {d, out4, true, {}, true})) outNames.push_back(c.name());
  auto outHas = [&](const std::string& prefix) {
    return std::any_of(outNames.begin(), outNames.end(), [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(outHas("winograd")) << ::testing::PrintToString(outNames);
  EXPECT_TRUE(outHas("gemm-v2"));
  EXPECT_FALSE(outHas("coop"));
  // Cout <= 4: direct is a candidate (the rule takes it only for large images).
  auto narrow = ops::Conv2dWeights::allocate(ctx(), 4, 320, ops::Conv2dParams::square(3), o);
  ops::ConvProblem q = p;
  q.cin = 320, q.cout = 4, q.h = q.ho = 64, q.w = q.wo = 64;
  bool direct = false;
  for (auto& c : ops::convCandidates(q, {d, narrow, true, {}, true})) direct = direct || c.algo == ConvAlgo::Direct;
  EXPECT_TRUE(direct);
  // The UNet's conv_out has 2 x 4 x 4 = 32 blocks of 16 x 16 pixels: direct is also timed with its 20 slices of
  // 16 input channels split in 2, 4, 8 and 16 parts, normalized to whole slices per part (8 -> 7 parts of 3
  // slices, 16 -> 10 of 2); without scratch memory for the partials, no split.
  std::vector<std::string> qNames;
  for (auto& c : ops::convCandidates(q, {d, narrow, true, {}, true})) qNames.push_back(c.name());
  for (const char* n : {"direct", "direct split 2", "direct split 4", "direct split 7", "direct split 10"})
    EXPECT_NE(std::find(qNames.begin(), qNames.end(), n), qNames.end()) << n << ": " << ::testing::PrintToString(qNames);
  for (auto& c : ops::convCandidates(q, {d, narrow, false, {}, true})) EXPECT_EQ(c.splitK, 1) << c.name();
  // Blocks that fill the GPU already (the VAE's conv_out, 1024 blocks): no split.
  ops::ConvProblem vaeOut = q;
  vaeOut.n = 1, vaeOut.h = vaeOut.ho = vaeOut.w = vaeOut.wo = 512;
  for (auto& c : ops::convCandidates(vaeOut, {d, narrow, true, {}, true})) EXPECT_EQ(c.splitK, 1) << c.name();
}

TEST_F(ConvTuneTest, PrecompileRequestsEachUncachedProblemOnce) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  auto w = weights();
  auto fake = std::make_unique<FakeTimer>(std::map<std::string, double>{{v2, 0.5}, {wino, 0.9}}, &calls_);
  FakeTimer* timer = fake.get();
  ops::ConvTuner t(ctx(), settings(), std::move(fake));
  t.precompile(problem(), DType::F32);
  t.precompile(problem(), DType::F32);
  ASSERT_EQ(timer->precompiled.size(), 1u);
  EXPECT_NE(timer->precompiled[0].find(problem().str()), std::string::npos);
  EXPECT_EQ(calls_, 0);  // nothing timed yet
  EXPECT_EQ(t.plan(problem(), context(*w), "layer").algo, ConvAlgo::GemmV2);
  EXPECT_EQ(calls_, 1);
  ops::ConvProblem other = problem();
  other.h = other.ho = 10;
  t.precompile(problem(), DType::F32);  // tuned (cached) now
  t.precompile(other, DType::F32);
  EXPECT_EQ(timer->precompiled.size(), 2u);
  auto off = settings();
  off.mode = ops::ConvTuneSettings::Mode::Off;
  auto fakeOff = std::make_unique<FakeTimer>(std::map<std::string, double>{}, &calls_);
  FakeTimer* timerOff = fakeOff.get();
  ops::ConvTuner disabled(ctx(), off, std::move(fakeOff));
  disabled.precompile(other, DType::F32);
  EXPECT_TRUE(timerOff->precompiled.empty());
}

TEST_F(ConvTuneTest, ChoosesTheFastestCandidate) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  auto w = weights();
  {
    auto t = tuner({{v2, 0.5}, {wino, 0.9}});
    ops::ConvPlan plan = t->plan(problem(), context(*w), "layer a");
    EXPECT_EQ(plan.algo, ConvAlgo::GemmV2);
    EXPECT_EQ(plan.source, "tuner");
    ASSERT_TRUE(plan.candidate);
    EXPECT_EQ(plan.candidate->name(), v2);
    EXPECT_EQ(t->choices().at("layer a").candidate, v2);
    EXPECT_EQ(t->stats().tuned, 1);
    EXPECT_EQ(calls_, 1);
  }
  fs::remove_all(dir_);
  {
    auto t = tuner({{v2, 0.9}, {wino, 0.5}});
    EXPECT_EQ(t->plan(problem(), context(*w), "layer a").algo, ConvAlgo::Winograd);
    // The same problem again (another layer of the same shape): measured once.
    EXPECT_EQ(t->plan(problem(), context(*w), "layer b").algo, ConvAlgo::Winograd);
    EXPECT_EQ(calls_, 2);
    EXPECT_EQ(t->stats().tuned, 1);
  }
}

// A candidate the timer could not record or compile is reported with the problem and why (sdgen -v,
// --profile-conv), not just left out of the choice: session 56 found a rows kernel that no longer compiled only
// because it was missing from a tuning's list.
TEST_F(ConvTuneTest, DroppedCandidatesAreReportedWithTheProblemAndWhy) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  auto w = weights();
  auto t = tuner({{v2, 0.5}});
  EXPECT_EQ(t->plan(problem(), context(*w), "layer").algo, ConvAlgo::GemmV2);
  EXPECT_EQ(t->stats().dropped, 1);
  const std::vector<std::string> dropped = t->droppedCandidates();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0], ops::convTuneProblemKey(problem(), w->storage()) + ": " + wino +
                            ": not in the fake timer's table");
  // A second layer of the problem is not measured again, nor reported again.
  t->plan(problem(), context(*w), "layer b");
  EXPECT_EQ(t->droppedCandidates().size(), 1u);
}

// A compile error's lines on one line, the reason bounded.
TEST(ConvTuneFailureNote, OneLineBounded) {
  EXPECT_EQ(ops::convTuneFailureNote("coop 128x128 halo3",
                                     "Slang compilation of 'k' failed (f.slang):\r\nerror: divide by zero\n"),
            "coop 128x128 halo3: Slang compilation of 'k' failed (f.slang): | error: divide by zero");
  const std::string note = ops::convTuneFailureNote("c", std::string(1000, 'x') + "\nmore");
  EXPECT_EQ(note, "c: " + std::string(ops::kMaxFailureWhy, 'x'));
}

// The real timer names a candidate it cannot record (on a device without tensor cores: coop) and why, on one line
// of at most 240 characters of reason.
TEST_F(ConvTuneTest, RealTimerNamesACandidateItCannotRecord) {
  if (!ctx().info().timestampsSupported) GTEST_SKIP() << "no timestamps on this device";
  if (ops::gemmCoopSupported(ctx().info())) GTEST_SKIP() << "this device runs the coop tiles";
  auto w = weights();
  const std::optional<ConvCandidate> ruled = ops::ruleCandidate(problem(), context(*w));
  ASSERT_TRUE(ruled);
  const ConvCandidate rule = *ruled;
  const ConvCandidate coop{ConvAlgo::Coop, ConvTile{64, 64, 0, 0}, 1};
  std::unique_ptr<ops::ConvCandidateTimer> timer = ops::makeGpuConvTimer(ctx(), 1);
  uint64_t launches = 0;
  const std::vector<std::optional<double>> ms = timer->time(problem(), *w, {rule, coop}, launches);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_TRUE(ms[0]);
  EXPECT_FALSE(ms[1]);
  const std::vector<std::string> failures = timer->failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].rfind(coop.name() + ": ", 0), 0u) << failures[0];
  EXPECT_GT(failures[0].size(), coop.name().size() + 2) << "no reason given";
  EXPECT_EQ(failures[0].find('\n'), std::string::npos) << failures[0];
  EXPECT_LE(failures[0].size(), coop.name().size() + 2 + ops::kMaxFailureWhy);
  std::printf("dropped: %s\n", failures[0].c_str());
}

// Near-equal candidates are ties (kConvTuneTieMargin): the rule's candidate, then fp32 accumulation, then the
// first name, so that two
// fresh tunes whose timings differ by noise choose the same kernel (same bits across processes).
TEST(ConvTuneRanking, TiesGoToTheRuleThenFp32ThenTheName) {
  using V = std::vector<std::string>;
  EXPECT_EQ(ops::rankTunedCandidates({{"b", 1.00}, {"a", 1.03}, {"c", 1.20}}, ""), (V{"a", "b", "c"}));
  EXPECT_EQ(ops::rankTunedCandidates({{"b", 1.00}, {"a", 1.03}, {"c", 1.20}}, "b"), (V{"b", "a", "c"}));
  EXPECT_EQ(ops::rankTunedCandidates({{"b", 1.03}, {"a", 1.00}, {"c", 1.20}}, "b"), (V{"b", "a", "c"}));
  // Outside the margin the fastest wins, the rule's candidate included.
  EXPECT_EQ(ops::rankTunedCandidates({{"b", 1.00}, {"a", 1.10}, {"c", 1.04}}, "a"), (V{"b", "c", "a"}));
  EXPECT_EQ(ops::rankTunedCandidates({{"z", 0.5}, {"a", 0.9}}, "a"), (V{"z", "a"}));
  // Order by time (not by name) after the ties; the preferred one need not be measured.
  EXPECT_EQ(ops::rankTunedCandidates({{"a", 1.0}, {"d", 2.0}, {"c", 3.0}, {"b", 4.0}}, "x"), (V{"a", "d", "c", "b"}));
  EXPECT_TRUE(ops::rankTunedCandidates({}, "a").empty());
  // Among the ties fp32 accumulation first (session 45), after the rule's candidate.
  EXPECT_EQ(ops::rankTunedCandidates({{"coop 128x128 f16acc halo", 1.00}, {"coop 128x128 halo", 1.04}, {"coop 64x64", 1.2}}, ""),
            (V{"coop 128x128 halo", "coop 128x128 f16acc halo", "coop 64x64"}));
  EXPECT_EQ(ops::rankTunedCandidates({{"coop 128x128 f16acc halo", 1.00}, {"coop 128x128 halo", 1.04}},
                                     "coop 128x128 f16acc halo"),
            (V{"coop 128x128 f16acc halo", "coop 128x128 halo"}));
  EXPECT_EQ(ops::rankTunedCandidates({{"coop 128x128 f16acc halo", 1.00}, {"coop 128x128 halo", 1.06}}, ""),
            (V{"coop 128x128 f16acc halo", "coop 128x128 halo"}));  // outside the margin: the time
}

TEST_F(ConvTuneTest, NearEqualTimingsKeepTheRulesCandidate) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  auto w = weights();
  const std::optional<ConvCandidate> rule = ops::ruleCandidate(problem(), context(*w));
  ASSERT_TRUE(rule);
  const std::string other = rule->name() == v2 ? wino : v2;
  for (double ruleMs : {0.50, 0.51, 0.52}) {  // the other 0.5: both orders of a noisy tie
    fs::remove_all(dir_);
    auto t = tuner({{other, 0.5}, {rule->name(), ruleMs}});
    ops::ConvPlan plan = t->plan(problem(), context(*w), "layer");
    ASSERT_TRUE(plan.candidate);
    EXPECT_EQ(plan.candidate->name(), rule->name()) << ruleMs;
  }
  fs::remove_all(dir_);
  auto t = tuner({{other, 0.5}, {rule->name(), 0.6}});  // clearly slower: the measurement wins
  EXPECT_EQ(t->plan(problem(), context(*w), "layer").candidate->name(), other);
}

TEST_F(ConvTuneTest, FallsBackWhenTheFastestCannotRun) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  auto t = tuner({{v2, 0.9}, {wino, 0.5}});
  // The layer's weights lack the Winograd filters: the next fastest runs.
  auto noWinograd = weights(false);
  ops::ConvPlan plan = t->plan(problem(), context(*noWinograd), "layer");
  EXPECT_EQ(plan.algo, ConvAlgo::GemmV2);
  EXPECT_EQ(plan.source, "tuner");
  EXPECT_NE(ops::candidateViolation(*ops::parseConvCandidate(wino), problem(), context(*noWinograd)).find("Winograd"),
            std::string::npos);
  // No scratch memory either: Winograd cannot run; with only Winograd measured, the rule decides.
  fs::remove_all(dir_);
  auto only = tuner({{wino, 0.5}});
  auto w = weights();
  ops::ConvContext noScratch = context(*w);
  noScratch.haveScratch = false;
  ops::ConvPlan rule = only->plan(problem(), noScratch, "layer");
  EXPECT_EQ(rule.source, "rule");
  EXPECT_EQ(rule.algo, ops::planConv(ConvAlgo::Auto, problem(), noScratch, "x").algo);
  // Nothing could be timed: the rule, and the problem is not measured again.
  fs::remove_all(dir_);
  auto none = tuner({});
  EXPECT_EQ(none->plan(problem(), context(*w), "layer").source, "rule");
  EXPECT_EQ(none->plan(problem(), context(*w), "layer 2").source, "rule");
  EXPECT_EQ(none->stats().failed, 1);
  // A forced candidate whose contract fails throws, naming it.
  test::expectErrorContaining(
      [&] { ops::planConvCandidate(*ops::parseConvCandidate(wino), problem(), context(*noWinograd), "fc"); },
      "candidate '" + wino + "'");
}

TEST_F(ConvTuneTest, SecondRunTakesTheCache) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  auto w = weights();
  tuner({{v2, 0.5}, {wino, 0.9}})->plan(problem(), context(*w), "layer");
  EXPECT_EQ(calls_, 1);
  ASSERT_TRUE(fs::exists(file()));
  auto second = tuner({{v2, 0.9}, {wino, 0.5}});  // other timings: never asked
  ops::ConvPlan plan = second->plan(problem(), context(*w), "layer");
  EXPECT_EQ(calls_, 1);
  EXPECT_EQ(second->stats().launches, 0u);
  EXPECT_EQ(second->stats().fromCache, 1);
  EXPECT_EQ(second->stats().tuned, 0);
  EXPECT_EQ(plan.algo, ConvAlgo::GemmV2);
  EXPECT_EQ(plan.source, "cache");
  // --retune: measured again and rewritten.
  auto again = tuner({{v2, 0.9}, {wino, 0.5}}, true);
  EXPECT_EQ(again->plan(problem(), context(*w), "layer").algo, ConvAlgo::Winograd);
  EXPECT_EQ(calls_, 2);
  EXPECT_EQ(tuner({})->plan(problem(), context(*w), "layer").algo, ConvAlgo::Winograd);
  EXPECT_EQ(calls_, 2);
  // A miss: another shape is measured.
  ops::ConvProblem other = problem();
  other.h = other.ho = 7;
  auto third = tuner({{v2, 0.5}});
  third->plan(other, context(*w), "layer");
  EXPECT_EQ(calls_, 3);
  EXPECT_EQ(third->stats().tuned, 1);
}

// Bad cache files: ignored with a warning, never an exception; tuning runs and rewrites the file.
TEST_F(ConvTuneTest, BadCacheFilesAreIgnoredAndRewritten) {
  const std::string v2 = name(ConvAlgo::GemmV2);
  auto w = weights();
  tuner({{v2, 0.5}})->plan(problem(), context(*w), "layer");
  const std::string valid = readCache();
  ASSERT_NE(valid.find("\"version\": 1"), std::string::npos) << valid;
  std::string oldVersion = valid;
  oldVersion.replace(oldVersion.find("\"version\": 1"), 12, "\"version\": 0");
  std::string staleCandidate = valid;  // the measured candidate and the recorded choice: one this version lacks
  for (size_t at; (at = staleCandidate.find(v2)) != std::string::npos;) staleCandidate.replace(at, v2.size(), "coop 96x96");
  std::string strayChoice = valid;  // a recorded choice that was not measured
  const std::string choice = "\"chosen\": \"" + v2 + "\"";
  ASSERT_NE(valid.find(choice), std::string::npos) << valid;
  strayChoice.replace(strayChoice.find(choice), choice.size(), "\"chosen\": \"general\"");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json {{{", "not valid JSON"},
      {valid.substr(0, valid.size() / 2), "not valid JSON"},  // truncated
      {"[1, 2, 3]", "not valid JSON"},
      {"{\"format\": \"something else\"}", "not an sdgen"},
      {oldVersion, "version 0"},
      {staleCandidate, "malformed or stale"},
      {strayChoice, "malformed or stale"},
      {std::string(size_t(5) << 20, '['), "more than"},  // oversized (and hostile)
      {std::string(200000, '[') + std::string(200000, ']'), "not valid JSON"},  // deep nesting
  };
  for (const auto& [text, warning] : cases) {
    SCOPED_TRACE(warning);
    writeCache(text);
    calls_ = 0;
    auto t = tuner({{v2, 0.5}});
    const auto warnings = t->warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(warning), std::string::npos) << warnings[0];
    EXPECT_EQ(t->plan(problem(), context(*w), "layer").algo, ConvAlgo::GemmV2);
    EXPECT_EQ(calls_, 1);
    auto next = tuner({});  // rewritten: the next run hits
    EXPECT_TRUE(next->warnings().empty()) << next->warnings()[0];
    EXPECT_EQ(next->plan(problem(), context(*w), "layer").source, "cache");
    EXPECT_EQ(calls_, 1);
  }
}

TEST_F(ConvTuneTest, OtherDevicesEntriesAreKeptButNotUsed) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  const std::string key = ops::convTuneProblemKey(problem(), DType::F32);
  writeCache(R"({"format": "sdgen conv autotune", "version": 1, "entries": [
      {"device": "Another GPU | driver 1 | 1234:5678 | 00", "problem": ")" + key +
             R"(", "family": "f", "ms": {")" + wino + R"(": 0.1}}]})");
  auto w = weights();
  auto t = tuner({{v2, 0.5}, {wino, 0.9}});
  EXPECT_TRUE(t->warnings().empty());
  EXPECT_EQ(t->plan(problem(), context(*w), "layer").algo, ConvAlgo::GemmV2);
  EXPECT_EQ(calls_, 1);
  const std::string text = readCache();
  EXPECT_NE(text.find("Another GPU"), std::string::npos);
  EXPECT_NE(text.find(ops::convTuneDeviceKey(ctx().info())), std::string::npos);
}

TEST_F(ConvTuneTest, UnwritableCacheDirectoryStillTunes) {
  const std::string v2 = name(ConvAlgo::GemmV2);
  writeCache("a file where the cache directory should be");
  ops::ConvTuneSettings s = settings();
  s.cacheDir = file() + "/sub";  // a directory below a regular file cannot be created, even by root
  ops::ConvTuner t(ctx(), s, std::make_unique<FakeTimer>(std::map<std::string, double>{{v2, 0.5}}, &calls_));
  auto w = weights();
  EXPECT_EQ(t.plan(problem(), context(*w), "layer").algo, ConvAlgo::GemmV2);
  EXPECT_EQ(t.plan(problem(), context(*w), "layer 2").source, "tuner");  // kept in memory
  EXPECT_EQ(calls_, 1);
  const auto warnings = t.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot write the tuning cache"), std::string::npos) << warnings[0];
}

TEST_F(ConvTuneTest, OffMeansTheRuleAndNoTiming) {
  ops::ConvTuneSettings s = settings();
  s.mode = ops::ConvTuneSettings::Mode::Off;
  ops::ConvTuner t(ctx(), s, std::make_unique<FakeTimer>(std::map<std::string, double>{}, &calls_));
  EXPECT_FALSE(t.enabled());
  auto w = weights(true, &t);
  const graph::Shape in{1, 6, 6, 8};
  Allocation x = test::uploadFloats(ctx(), test::randomFloats(288, 3), DType::F32);
  Allocation y = ctx().allocate(288 * 4, "out");
  ops::Conv2dScratch scratch(ctx());
  CommandSequence seq(ctx());
  ops::Conv2dInfo info = ops::conv2d(ctx(), seq, graph::buffer(graph::view(x, DType::F32, in)), *w,
                                     graph::bufferSink(graph::view(y, DType::F32, in)), {.scratch = &scratch});
  EXPECT_EQ(info.source, "rule");
  EXPECT_EQ(info.algo, ops::planConv(ConvAlgo::Auto, problem(), context(*w), "x").algo);
  EXPECT_EQ(calls_, 0);
  EXPECT_FALSE(fs::exists(file()));
  // Auto settings on a CPU device (lavapipe) are off unless SDGEN_AUTOTUNE says otherwise.
  DeviceInfo cpu = ctx().info();
  cpu.type = "cpu";
  cpu.timestampsSupported = true;
  if (!std::getenv("SDGEN_AUTOTUNE")) EXPECT_FALSE(ops::convTuneEnabled({}, cpu));
  DeviceInfo gpu = cpu;
  gpu.type = "discrete";
  if (!std::getenv("SDGEN_AUTOTUNE")) EXPECT_TRUE(ops::convTuneEnabled({}, gpu));
  gpu.timestampsSupported = false;
  EXPECT_FALSE(ops::convTuneEnabled(settings(), gpu));
}

TEST_F(ConvTuneTest, WinogradFiltersPackedWhereWinogradWon) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  const ops::Conv2dParams k3 = ops::Conv2dParams::square(3);
  auto w = weights();
  {
    auto t = tuner({{v2, 0.5}, {wino, 0.9}});
    EXPECT_TRUE(t->packWinogradFilters(8, 8, k3, DType::F32, true));  // nothing measured: the rule's answer
    EXPECT_FALSE(t->packWinogradFilters(8, 8, k3, DType::F32, false));
    t->plan(problem(), context(*w), "layer");
    EXPECT_FALSE(t->packWinogradFilters(8, 8, k3, DType::F32, true));  // GEMM v2 won: no filters
    EXPECT_TRUE(t->packWinogradFilters(8, 16, k3, DType::F32, true));  // another family: the rule
    EXPECT_FALSE(t->packWinogradFilters(8, 8, ops::Conv2dParams::square(1), DType::F32, false));
  }
  fs::remove_all(dir_);
  auto t = tuner({{v2, 0.9}, {wino, 0.5}});
  t->plan(problem(), context(*w), "layer");
  EXPECT_TRUE(t->packWinogradFilters(8, 8, k3, DType::F32, false));  // Winograd won: filters, whatever the rule
  auto fresh = tuner({});  // from the cache file, at the next load
  EXPECT_TRUE(fresh->packWinogradFilters(8, 8, k3, DType::F32, false));
}

// A tuned plan computes the rule's result: both against the float64 reference, on the device.
TEST_F(ConvTuneTest, TunedPlanComputesTheRulesResult) {
  const std::string v2 = name(ConvAlgo::GemmV2), wino = name(ConvAlgo::Winograd);
  auto t = tuner({{v2, 0.5}, {wino, 0.9}});
  auto tuned = weights(true, t.get());
  auto ruled = weights(true);
  const graph::Shape in{1, 6, 6, 8};
  std::vector<float> host = test::randomFloats(288, 11);
  Allocation x = test::uploadFloats(ctx(), host, DType::F32);
  std::vector<double> input(host.begin(), host.end());
  std::vector<double> ref = test::conv2dReference(input, in, w_, b_, 8, ops::Conv2dParams::square(3));
  ops::Conv2dScratch scratch(ctx());
  for (const ops::Conv2dWeights* w : {tuned.get(), ruled.get()}) {
    Allocation y = ctx().allocate(288 * 4, "out");
    test::poison(ctx(), y);
    CommandSequence seq(ctx());
    ops::Conv2dInfo info = ops::conv2d(ctx(), seq, graph::buffer(graph::view(x, DType::F32, in)), *w,
                                       graph::bufferSink(graph::view(y, DType::F32, in)),
                                       {.scratch = &scratch, .label = "tuned check"});
    EXPECT_EQ(info.source, w == tuned.get() ? "tuner" : "rule");
    if (w == tuned.get()) EXPECT_EQ(info.candidate, v2);
    seq.run();
    std::vector<float> got = test::downloadFloats(ctx(), y, 288, DType::F32);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::abs(got[i] - ref[i]) / std::max(1.0, std::abs(ref[i])));
    EXPECT_LE(worst, 1e-4) << info.source << " " << ops::convAlgoName(info.algo);
  }
  EXPECT_EQ(calls_, 1);
}

// The real timer on this device: every candidate of a tiny problem gets a time; a second tuner launches nothing.
TEST_F(ConvTuneTest, RealTimingRun) {
  if (!ctx().info().timestampsSupported) GTEST_SKIP() << "no timestamps on this device";
  auto w = weights();
  ops::ConvTuner first(ctx(), settings());
  ops::ConvPlan plan = first.plan(problem(), context(*w), "layer");
  EXPECT_EQ(plan.source, "tuner");
  const ops::ConvTuneStats st = first.stats();
  EXPECT_EQ(st.tuned, 1);
  EXPECT_GT(st.launches, 0u);
  EXPECT_GT(st.seconds, 0.0);
  const std::string text = readCache();
  for (const ConvCandidate& c : ops::convCandidates(problem(), context(*w)))
    EXPECT_NE(text.find("\"" + c.name() + "\""), std::string::npos) << c.name() << " not timed:\n" << text;
  ops::ConvTuner second(ctx(), settings());
  ops::ConvPlan again = second.plan(problem(), context(*w), "layer");
  EXPECT_EQ(second.stats().launches, 0u);
  EXPECT_EQ(again.source, "cache");
  EXPECT_EQ(again.candidate->name(), plan.candidate->name());
}

}  // namespace
}  // namespace sdgen
