// Prompt syntax through the whole pipeline on the tiny models (lavapipe in CI), and the UNet over a context of
// two windows (154 tokens):
//  - a plain prompt shorter than 76 tokens gives the bit-identical image with --prompt-syntax webui and plain;
//  - long, weighted and BREAK prompts condition the image (it changes), and errors name the prompt;
//  - cross-attention over 154 keys: a context made of the same 77 tokens twice must give the diffusers reference
//    of the 77-token context (attention over duplicated keys and values is the same average), and swapping the
//    two windows changes nothing (cross-attention has no positions).
#include <gtest/gtest.h>

#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/unet.h"
#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "ops/conv2d_scratch.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using prompt::PromptSyntax;

class PromptPipeline : public test::VulkanTest, public testing::WithParamInterface<const char*> {
 protected:
  pipeline::GenerationRequest request(const std::string& prompt, PromptSyntax syntax) {
    pipeline::GenerationRequest req;
    req.prompt = prompt;
    req.negativePrompt = "blurry";
    req.steps = 2;
    req.width = req.height = 16;
    req.seed = 11;
    req.sampler = sampling::SamplerKind::Euler;
    req.promptSyntax = syntax;
    return req;
  }
};

TEST_P(PromptPipeline, PlainPromptIsBitIdenticalInBothSyntaxes) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath(std::string("tiny-") + GetParam())});
  for (const char* p : {"a red circle on a blue background", "it's a dog's life: 1,000 stars"}) {
    const pipeline::Image webui = t2i.generate(request(p, PromptSyntax::Webui));
    const pipeline::Image plain = t2i.generate(request(p, PromptSyntax::Plain));
    EXPECT_EQ(webui.rgb, plain.rgb) << p;
    EXPECT_EQ(webui.pixels, plain.pixels) << p;
    EXPECT_TRUE(webui.warnings.empty() && plain.warnings.empty());
  }
}

TEST_P(PromptPipeline, LongWeightedAndBreakPromptsConditionTheImage) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath(std::string("tiny-") + GetParam())});
  std::string longPrompt = "a red circle on a blue background";
  for (int i = 0; i < 20; ++i) longPrompt += ", a small green square";  // 107 tokens
  const pipeline::Image plain = t2i.generate(request(longPrompt, PromptSyntax::Plain));
  ASSERT_EQ(plain.warnings.size(), 1u);
  EXPECT_NE(plain.warnings[0].find("the prompt is longer than the text encoder's 77 tokens"), std::string::npos);
  // The tokens after the 75th condition the image only in webui mode; both windows are read (the second one's
  // content matters, not only the first window's).
  const pipeline::Image webui = t2i.generate(request(longPrompt, PromptSyntax::Webui));
  EXPECT_TRUE(webui.warnings.empty());
  EXPECT_NE(webui.pixels, plain.pixels);
  const pipeline::Image other = t2i.generate(request(longPrompt + ", a yellow star", PromptSyntax::Webui));
  EXPECT_NE(other.pixels, webui.pixels);

  const pipeline::Image base = t2i.generate(request("a red circle", PromptSyntax::Webui));
  const pipeline::Image weighted = t2i.generate(request("a (red:1.4) circle", PromptSyntax::Webui));
  EXPECT_NE(weighted.pixels, base.pixels);
  EXPECT_EQ(t2i.generate(request("a (red:1) circle", PromptSyntax::Webui)).pixels, base.pixels);
  EXPECT_NE(t2i.generate(request("a red BREAK circle", PromptSyntax::Webui)).pixels, base.pixels);
  // The negative prompt may be the longer one; no guidance runs the prompt's windows alone.
  pipeline::GenerationRequest req = request("a red circle", PromptSyntax::Webui);
  req.negativePrompt = longPrompt;
  EXPECT_NE(t2i.generate(req).pixels, base.pixels);
  req.cfgScale = 1.f;
  req.prompt = longPrompt;
  EXPECT_NO_THROW(t2i.generate(req));
  // The first request again: the recorded stages of one context length are not confused with another's.
  EXPECT_EQ(t2i.generate(request(longPrompt, PromptSyntax::Webui)).pixels, webui.pixels);

  const std::string message =
      test::errorOf([&] { t2i.generate(request("a (red:1.2.3) circle", PromptSyntax::Webui)); });
  EXPECT_NE(message.find("the prompt: malformed weight '1.2.3' at character 8"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Tiny, PromptPipeline, testing::Values("sd1", "sd2"));

class UNetLongContext : public test::VulkanTest, public testing::WithParamInterface<const char*> {};

TEST_P(UNetLongContext, TwoWindowsOfContext) {
  const std::string which = GetParam();
  models::ModelFiles m = models::openModel(test::dataPath("tiny-" + which));
  auto fx = models::SafetensorsFile::open(test::dataPath("fixtures/unet_" + which + ".safetensors"));
  nn::ParameterStore params(ctx(), DType::F32);
  networks::UNet unet(params, m.unetConfig, *m.unetWeights);
  ops::Conv2dScratch scratch(ctx());
  test::FixtureTensor sample = test::fixtureTensor(fx, "sample.a"), context = test::fixtureTensor(fx, "context.a");
  const auto& s = sample.shape;  // [2, 4, 8, 8]
  const int64_t n = s[0], h = s[2], w = s[3], c = s[1], seq = context.shape[1], d = context.shape[2];
  ASSERT_EQ(seq, 77);

  // Per batch item: [a, a] (the same window twice) and [a, b] / [b, a] with b another item's window.
  auto window = [&](int64_t item) {
    return std::vector<float>(context.values.begin() + item * seq * d, context.values.begin() + (item + 1) * seq * d);
  };
  auto contextOf = [&](auto pick) {
    std::vector<float> out;
    for (int64_t i = 0; i < n; ++i) {
      auto [first, second] = pick(i);
      auto a = window(first), b = window(second);
      out.insert(out.end(), a.begin(), a.end());
      out.insert(out.end(), b.begin(), b.end());
    }
    return out;
  };
  graph::Graph g;
  graph::TensorId in = g.input("sample", {n, h, w, c}, DType::F32);
  graph::TensorId ctxT = g.input("context", {n, 2 * seq, d}, DType::F32);
  graph::TensorId out = g.output("noise", {n, h, w, c}, DType::F32);
  nn::Builder b(g, DType::F32, &scratch);
  graph::Value t{{n, 1}, {}, [n](const graph::Resolver&) { return graph::broadcast(graph::uniform(0), {n, 1}); }, 0};
  unet.build(b, g.read(in), t, g.read(ctxT), out);
  Allocation inMem = uploadFloats(ctx(), test::nchwToNhwc(sample.values, s), DType::F32, "sample");
  Allocation ctxMem = ctx().allocate(uint64_t(n) * 2 * seq * d * 4, "context");
  Allocation outMem = ctx().allocate(sample.values.size() * 4, "noise");
  graph::CompiledGraph cg(ctx(), g,
                          {{in, graph::view(inMem, DType::F32, {n, h, w, c})},
                           {ctxT, graph::view(ctxMem, DType::F32, {n, 2 * seq, d})},
                           {out, graph::view(outMem, DType::F32, {n, h, w, c})}});
  cg.setUniform(0, 500.f);
  auto run = [&](const std::vector<float>& ctxValues) {
    writeFloats(ctx(), ctxMem, ctxValues, DType::F32);
    cg.run();
    return test::nhwcToNchw(downloadFloats(ctx(), outMem, sample.values.size(), DType::F32), s);
  };

  const auto twice = run(contextOf([](int64_t i) { return std::pair{i, i}; }));
  EXPECT_LE(test::relativeError(twice, test::fixtureTensor(fx, "noise_pred.a.t500").values), 1e-4);
  const auto ab = run(contextOf([n](int64_t i) { return std::pair{i, (i + 1) % n}; }));
  const auto ba = run(contextOf([n](int64_t i) { return std::pair{(i + 1) % n, i}; }));
  EXPECT_LE(test::relativeError(ab, ba), 1e-5);
  EXPECT_GT(test::relativeError(ab, twice), 1e-3);  // the second window is attended to
}

INSTANTIATE_TEST_SUITE_P(Tiny, UNetLongContext, testing::Values("sd1", "sd2"));

}  // namespace
}  // namespace sdgen
