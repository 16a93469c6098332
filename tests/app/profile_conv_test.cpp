// --profile-conv on the tiny SD1 test model (lavapipe): the report's structure and its consistency with the
// recorded graphs. Timings are only required to be positive, never compared with anything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "app/profile_conv.h"
#include "engine/command_sequence.h"
#include "ops/conv2d.h"
#include "ops/conv2d_plan.h"
#include "tests/test_support.h"

namespace sdgen::app {
namespace {

class ProfileConv : public test::VulkanTest {};

TEST_F(ProfileConv, TinyModelReportIsConsistent) {
  ProfileSettings st;
  st.modelPath = std::string(SDGEN_SOURCE_DIR) + "/tests/data/tiny-sd1";
  st.precision = DType::F32;
  st.width = st.height = 32;  // 16x16 latents: every level of the tiny UNet and VAE is small
  st.autotune.mode = ops::ConvTuneSettings::Mode::Off;  // the rule's choices (the autotune: the next test)
  ProfileReport r = profileConv(ctx(), st);
  ASSERT_EQ(r.graphs.size(), 3u);
  EXPECT_EQ(r.graphs[0].name, "unet step");
  EXPECT_EQ(r.graphs[1].name, "vae decode");
  EXPECT_EQ(r.graphs[2].name, "text encoder");
  {  // No convolutions; every launch of the transformer is a linear, attention or norm launch.
    const ProfiledGraph& t = r.graphs[2];
    EXPECT_TRUE(t.convs.empty());
    EXPECT_GT(t.commandsByType.at("linear"), 0u);
    EXPECT_GT(t.commandsByType.at("attention"), 0u);
    EXPECT_EQ(t.others.size(), t.commands);
    EXPECT_GT(t.totalMs, 0);
  }
  EXPECT_EQ(r.width, 32);
  EXPECT_EQ(r.model, "tiny-sd1");

  for (size_t gi = 0; gi < 2; ++gi) {
    const ProfiledGraph& g = r.graphs[gi];
    SCOPED_TRACE(g.name);
    ASSERT_FALSE(g.convs.empty());
    // Every conv row: a problem, an algorithm and tile, and the kernels of that algorithm's pipeline, timed.
    size_t convKernels = 0;
    std::set<std::string> layers;
    for (const auto& c : g.convs) {
      SCOPED_TRACE(c.layer);
      EXPECT_TRUE(layers.insert(c.layer).second) << "conv layer listed twice";
      EXPECT_NE(c.problem.find(" -> "), std::string::npos);
      EXPECT_FALSE(c.weights.empty());
      // direct: the VAE's conv_out (3 output channels) on CPU devices.
      ASSERT_TRUE(c.algo == "general" || c.algo == "gemm-v2" || c.algo == "winograd" || c.algo == "direct") << c.algo;
      EXPECT_FALSE(c.tile.empty());
      EXPECT_EQ(c.selectedBy, "rule");
      EXPECT_EQ(c.candidate, "");
      const size_t expectedKernels = c.algo == "winograd" ? 3 : 1;
      ASSERT_EQ(c.kernels.size(), expectedKernels);
      if (c.algo == "winograd") {
        EXPECT_EQ(c.kernels[0].role, "input transform");
        EXPECT_EQ(c.kernels[1].role, "gemm");
        EXPECT_EQ(c.kernels[2].role, "output transform");
      }
      double sum = 0;
      for (const auto& k : c.kernels) {
        EXPECT_EQ(k.label.rfind(c.layer + " ", 0), 0u) << k.label;
        EXPECT_GT(k.ms, 0);
        EXPECT_GT(k.flops, 0);
        EXPECT_GT(k.bytes, 0);
        sum += k.ms;
      }
      EXPECT_NEAR(c.ms, sum, 1e-9);
      EXPECT_GT(c.directFlops, 0);
      EXPECT_GT(c.tflops, 0);
      EXPECT_GT(c.gbps, 0);
      convKernels += c.kernels.size();
    }
    // Per-type totals add up to the graph's total, and the launch counts to the graph's launches.
    double ms = 0;
    size_t commands = 0;
    for (const auto& type : profileOpTypes()) {
      ms += g.msByType.at(type);
      commands += g.commandsByType.at(type);
    }
    EXPECT_NEAR(ms, g.totalMs, 1e-6 * g.totalMs);
    EXPECT_EQ(commands, g.commands);
    EXPECT_EQ(g.launches, g.commands);  // these graphs record dispatches only (no copies or fills)
    EXPECT_EQ(g.commandsByType.at("conv"), convKernels);
    EXPECT_GT(g.commandsByType.at("norm"), 0u);
    EXPECT_GT(g.commandsByType.at("linear"), 0u);
    EXPECT_GT(g.commandsByType.at("attention"), 0u);
  }
  // The UNet's stride-2 downsampler is found as such: input twice the output's size.
  bool sawStride2 = false;
  for (const auto& c : r.graphs[0].convs)
    if (c.layer == "down 0 downsample") {
      sawStride2 = true;
      EXPECT_NE(c.problem.find("[2,16,16,32] -> [2,8,8,32] 3x3 s2"), std::string::npos) << c.problem;
    }
  EXPECT_TRUE(sawStride2);

  // The JSON report carries the same numbers.
  nlohmann::json j = nlohmann::json::parse(profileJson(r));
  ASSERT_EQ(j["graphs"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto& g = j["graphs"][i];
    EXPECT_EQ(g["launches"].get<size_t>(), r.graphs[i].launches);
    EXPECT_EQ(g["convs"].size(), r.graphs[i].convs.size());
    size_t launches = 0;
    for (const auto& type : profileOpTypes()) launches += g["by_type"][type]["launches"].get<size_t>();
    EXPECT_EQ(launches, r.graphs[i].commands);
    // Every non-conv command is listed with its node, type and time: with the conv kernels, all of them.
    size_t convCommands = 0;
    for (const auto& c : r.graphs[i].convs) convCommands += c.kernels.size();
    ASSERT_EQ(g["others"].size() + convCommands, r.graphs[i].commands);
    double otherMs = 0;
    for (const auto& o : g["others"]) {
      EXPECT_NE(o["type"].get<std::string>(), "conv");
      EXPECT_FALSE(o["node"].get<std::string>().empty());
      otherMs += o["ms"].get<double>();
    }
    double nonConvMs = 0;
    for (const auto& type : profileOpTypes())
      if (type != "conv") nonConvMs += r.graphs[i].msByType.at(type);
    EXPECT_NEAR(otherMs, nonConvMs, 1e-9 * (1 + nonConvMs));
    if (r.graphs[i].convs.empty()) continue;
    EXPECT_EQ(g["convs"][0]["kernels"][0]["ms"].get<double>(), r.graphs[i].convs[0].kernels[0].ms);
    EXPECT_EQ(g["convs"][0]["selected_by"], "rule");
  }
  EXPECT_EQ(j["autotune"]["enabled"], false);
  EXPECT_EQ(j["autotune"]["problems_tuned"], 0);
  EXPECT_EQ(j["autotune"]["candidates_dropped"], 0);
  EXPECT_TRUE(j["autotune"]["dropped"].empty());
  // The text report names every conv layer.
  const std::string text = formatProfile(r);
  for (const auto& c : r.graphs[1].convs) EXPECT_NE(text.find(c.layer), std::string::npos);
  EXPECT_EQ(text.find("dropped"), std::string::npos);
  // Candidates the tuner could not record or compile (ConvTuner::droppedCandidates) are listed in both.
  ProfileReport withDropped = r;
  withDropped.autotune.dropped = 1;
  withDropped.autotuneDropped = {"[1,8,8,4] -> [1,8,8,4] 3x3 s1 p1 d1 | f16 | nhwc: coop 64x64: it failed"};
  EXPECT_NE(formatProfile(withDropped).find("1 candidate(s) dropped (could not be recorded or compiled):\n  [1,8,8,4]"),
            std::string::npos)
      << formatProfile(withDropped);
  nlohmann::json d = nlohmann::json::parse(profileJson(withDropped));
  EXPECT_EQ(d["autotune"]["candidates_dropped"], 1);
  EXPECT_EQ(d["autotune"]["dropped"][0], withDropped.autotuneDropped[0]);
}

// With the autotune on (as on GPUs; reps 1 to stay quick): the first profile times the problems and names the
// tuner's choice per layer, the second takes every choice from the cache and launches nothing for tuning.
// SDXL's UNet reads the added conditioning (pooled text embedding, micro-conditioning): --profile-conv feeds it
// random rows of its width, so the step of an SDXL model profiles (it refused with "needs the added
// conditioning" before) and its time-embedding linears are there.
TEST_F(ProfileConv, SdxlStepProfilesWithItsAddedConditioning) {
  ProfileSettings st;
  st.modelPath = std::string(SDGEN_SOURCE_DIR) + "/tests/data/tiny-sdxl";
  st.precision = DType::F32;
  st.width = st.height = 32;
  st.autotune.mode = ops::ConvTuneSettings::Mode::Off;
  ProfileReport r = profileConv(ctx(), st);
  ASSERT_EQ(r.graphs.size(), 3u);
  const ProfiledGraph& step = r.graphs[0];
  EXPECT_EQ(step.name, "unet step");
  EXPECT_FALSE(step.convs.empty());
  bool addEmbedding = false;
  for (const auto& o : step.others) addEmbedding = addEmbedding || o.node.find("add_embedding") != std::string::npos;
  EXPECT_TRUE(addEmbedding) << "no launch of the added conditioning's add_embedding";
  EXPECT_GT(step.totalMs, 0);
}

TEST_F(ProfileConv, AutotuneChoicesComeFromTheTunerThenTheCache) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sdgen-profile-tune-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ProfileSettings st;
  st.modelPath = std::string(SDGEN_SOURCE_DIR) + "/tests/data/tiny-sd1";
  st.precision = DType::F32;
  st.width = st.height = 32;
  st.autotune.mode = ops::ConvTuneSettings::Mode::On;
  st.autotune.cacheDir = dir.string();
  st.autotune.reps = 1;
  ProfileReport first = profileConv(ctx(), st);
  EXPECT_TRUE(first.autotune.enabled);
  EXPECT_GT(first.autotune.tuned, 0);
  // every candidate the tuner offers on this device records and compiles
  EXPECT_EQ(first.autotune.dropped, 0) << ::testing::PrintToString(first.autotuneDropped);
  EXPECT_GT(first.autotune.launches, 0u);
  std::map<std::string, std::string> chosen;  // "graph / layer" -> candidate
  for (const auto& g : first.graphs)
    for (const auto& c : g.convs) {
      ASSERT_TRUE(c.selectedBy == "tuner" || c.selectedBy == "rule") << c.layer << ": " << c.selectedBy;
      EXPECT_EQ(c.candidate.empty(), c.selectedBy == "rule") << c.layer;
      if (c.selectedBy == "tuner") chosen[g.name + " / " + c.layer] = c.candidate;
    }
  EXPECT_FALSE(chosen.empty());
  ProfileReport second = profileConv(ctx(), st);
  EXPECT_EQ(second.autotune.tuned, 0);
  EXPECT_EQ(second.autotune.launches, 0u);
  EXPECT_EQ(second.autotune.fromCache, first.autotune.tuned);
  size_t fromCache = 0;
  for (const auto& g : second.graphs)
    for (const auto& c : g.convs) {
      auto it = chosen.find(g.name + " / " + c.layer);
      if (it == chosen.end()) continue;
      ++fromCache;
      EXPECT_EQ(c.selectedBy, "cache") << c.layer;
      EXPECT_EQ(c.candidate, it->second) << c.layer;
    }
  EXPECT_EQ(fromCache, chosen.size());
  nlohmann::json j = nlohmann::json::parse(profileJson(second));
  EXPECT_EQ(j["autotune"]["problems_from_cache"], first.autotune.tuned);
  bool cacheField = false;
  for (const auto& g : j["graphs"])
    for (const auto& c : g["convs"]) cacheField = cacheField || c["selected_by"] == "cache";
  EXPECT_TRUE(cacheField);
  std::filesystem::remove_all(dir);
}

// The labels ops::conv2d gives its dispatches are the ones the profile parses (ops/conv2d_kernels.cpp names them,
// ops/conv2d_plan.cpp parses them): every algorithm, through the engine's own conv call.
class ConvKernelLabels : public test::VulkanTest {};

TEST_F(ConvKernelLabels, EveryAlgorithmsDispatchesParse) {
  const int cin = 8, cout = 8;
  std::vector<float> w = test::randomFloats(size_t(cout) * cin * 9, 1), b = test::randomFloats(cout, 2);
  ops::Conv2dWeights weights(ctx(), cout, cin, ops::Conv2dParams::square(3), w, b);
  Allocation x = test::uploadFloats(ctx(), test::randomFloats(size_t(1) * 8 * 8 * cin, 3), DType::F32);
  Allocation y = ctx().allocate(size_t(8) * 8 * cout * 4, "label test output");
  ops::Conv2dScratch scratch(ctx());
  for (ops::ConvAlgo algo : {ops::ConvAlgo::General, ops::ConvAlgo::GemmV2, ops::ConvAlgo::Winograd}) {
    SCOPED_TRACE(ops::convAlgoName(algo));
    CommandSequence seq(ctx());
    ops::Conv2dOptions o;
    o.algo = algo;
    o.scratch = &scratch;
    o.label = "up 0 resnet 1 conv1";
    ops::Conv2dInfo info = ops::conv2d(ctx(), seq, graph::buffer(graph::view(x, DType::F32, {1, 8, 8, cin})), weights,
                                       graph::bufferSink(graph::view(y, DType::F32, {1, 8, 8, cout})), o);
    ASSERT_EQ(info.kernels.size(), algo == ops::ConvAlgo::Winograd ? 3u : 1u);
    for (size_t i = 0; i < info.kernels.size(); ++i) {
      auto split = ops::splitConvDispatchLabel(info.kernels[i]);
      ASSERT_TRUE(split) << info.kernels[i];
      EXPECT_EQ(split->first, "up 0 resnet 1 conv1");
      EXPECT_EQ(split->second.algo, algo);
      if (algo == ops::ConvAlgo::Winograd) {
        const ops::ConvKernelRole roles[] = {ops::ConvKernelRole::InputTransform, ops::ConvKernelRole::Gemm,
                                             ops::ConvKernelRole::OutputTransform};
        EXPECT_EQ(split->second.role, roles[i]);
      }
      if (split->second.role == ops::ConvKernelRole::Gemm || split->second.role == ops::ConvKernelRole::Direct) {
        EXPECT_EQ(info.tile.rfind(std::to_string(split->second.bm) + "x" + std::to_string(split->second.bn), 0), 0u)
            << info.tile;
        EXPECT_EQ(info.kernels[i].substr(info.kernels[i].size() - split->second.tile.size()), split->second.tile);
      }
    }
  }
  EXPECT_FALSE(ops::splitConvDispatchLabel("down 0 attention 0 proj_in"));
  EXPECT_FALSE(ops::splitConvDispatchLabel("general 64x64"));  // a kernel needs its conv's label before it
  EXPECT_FALSE(ops::parseConvKernelLabel("gemm-v2 64xx64"));
  auto lanes = ops::splitConvDispatchLabel("down 0 downsample gemm-v2 32x32 lanes");
  ASSERT_TRUE(lanes);
  EXPECT_EQ(lanes->first, "down 0 downsample");
  EXPECT_EQ(lanes->second.tile, "32x32 lanes");
  EXPECT_EQ(lanes->second.bm, 32);
  // Tensor cores: the GEMM, and the input staged by an elementwise launch (which labels its interior part).
  auto coop = ops::splitConvDispatchLabel("down 0 resnet 0 conv1 coop 64x64");
  ASSERT_TRUE(coop);
  EXPECT_EQ(coop->second.algo, ops::ConvAlgo::Coop);
  EXPECT_EQ(coop->second.role, ops::ConvKernelRole::Direct);
  EXPECT_EQ(coop->second.bn, 64);
  // coop-winograd's explicit input transform (its fp16-accumulator tiles, session 42).
  auto transform = ops::splitConvDispatchLabel("decoder up 1 resnet 0 conv1 coop-winograd input transform");
  ASSERT_TRUE(transform);
  EXPECT_EQ(transform->first, "decoder up 1 resnet 0 conv1");
  EXPECT_EQ(transform->second.algo, ops::ConvAlgo::CoopWinograd);
  EXPECT_EQ(transform->second.role, ops::ConvKernelRole::InputTransform);
  auto staged = ops::splitConvDispatchLabel("down 0 resnet 0 conv1 coop input (interior)");
  ASSERT_TRUE(staged);
  EXPECT_EQ(staged->first, "down 0 resnet 0 conv1");
  EXPECT_EQ(staged->second.role, ops::ConvKernelRole::InputTransform);
  // Split-K: the GEMM's label carries the parts, its sum launch is a role of its own (no FLOPs counted twice).
  auto parts = ops::splitConvDispatchLabel("down 3 resnet 0 conv1 coop 64x64 split 16");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->first, "down 3 resnet 0 conv1");
  EXPECT_EQ(parts->second.role, ops::ConvKernelRole::Direct);
  EXPECT_EQ(parts->second.tile, "64x64 split 16");
  auto sum = ops::splitConvDispatchLabel("down 3 resnet 0 conv1 coop split-K sum");
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->first, "down 3 resnet 0 conv1");
  EXPECT_EQ(sum->second.role, ops::ConvKernelRole::SplitSum);
  EXPECT_STREQ(ops::convKernelRoleName(sum->second.role), "split-K sum");
  // The direct kernel split over input channels: the same two roles.
  auto directParts = ops::splitConvDispatchLabel("conv_out direct 16x16 split 7");
  ASSERT_TRUE(directParts);
  EXPECT_EQ(directParts->first, "conv_out");
  EXPECT_EQ(directParts->second.algo, ops::ConvAlgo::Direct);
  EXPECT_EQ(directParts->second.role, ops::ConvKernelRole::Direct);
  EXPECT_EQ(directParts->second.tile, "16x16 split 7");
  auto directSum = ops::splitConvDispatchLabel("conv_out direct split sum");
  ASSERT_TRUE(directSum);
  EXPECT_EQ(directSum->first, "conv_out");
  EXPECT_EQ(directSum->second.role, ops::ConvKernelRole::SplitSum);
  // A group norm's per-channel table (ops/conv2d_input_affine.h) before a staged or direct conv input.
  for (const char* label : {"decoder up 3 resnet 1 conv1 coop affine", "decoder conv_out direct affine",
                            "up 0 resnet 1 conv1 coop-winograd affine"}) {
    auto table = ops::splitConvDispatchLabel(label);
    ASSERT_TRUE(table) << label;
    EXPECT_EQ(table->second.role, ops::ConvKernelRole::NormTable) << label;
    EXPECT_STREQ(ops::convKernelRoleName(table->second.role), "norm table");
  }
  EXPECT_EQ(ops::splitConvDispatchLabel("decoder conv_out direct affine")->first, "decoder conv_out");
}

// The cost model: the direct kernels count the convolution's 2*M*N*K, Winograd's GEMM its 36 products.
TEST(ConvKernelCost, CountsTheWorkOfEachKernel) {
  ops::ConvProblem p;
  p.n = 2, p.h = p.w = 16, p.cin = 32, p.ho = p.wo = 16, p.cout = 64;
  p.p = ops::Conv2dParams::square(3);
  EXPECT_DOUBLE_EQ(ops::convDirectFlops(p), 2.0 * 2 * 16 * 16 * 64 * 32 * 9);
  auto direct = ops::convKernelCost(p, ops::ConvKernelRole::Direct, DType::F16, DType::F16);
  EXPECT_DOUBLE_EQ(direct.flops, ops::convDirectFlops(p));
  EXPECT_DOUBLE_EQ(direct.bytes, (2.0 * 16 * 16 * 32 + 9.0 * 32 * 64 + 2.0 * 16 * 16 * 64) * 2 + 64 * 4);
  auto gemm = ops::convKernelCost(p, ops::ConvKernelRole::Gemm, DType::F16, DType::F16);
  EXPECT_DOUBLE_EQ(gemm.flops, 2.0 * 36 * (2 * 4 * 4) * 32 * 64);
  // Coop's staging reads the input and writes it in fp16; a norm table writes N x 2 Cin floats.
  auto staged = ops::convKernelCost(p, ops::ConvKernelRole::InputTransform, DType::F32, DType::F16, ops::ConvAlgo::Coop);
  EXPECT_DOUBLE_EQ(staged.flops, 0.0);
  EXPECT_DOUBLE_EQ(staged.bytes, 2.0 * 16 * 16 * 32 * (4 + 2));
  auto table = ops::convKernelCost(p, ops::ConvKernelRole::NormTable, DType::F16, DType::F16, ops::ConvAlgo::Coop);
  EXPECT_DOUBLE_EQ(table.bytes, 2.0 * 2 * 32 * 4);
}

}  // namespace
}  // namespace sdgen::app
