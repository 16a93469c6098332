// The built-in model (models/builtin/sdgen-tiny) through sdgen's pipeline gives diffusers' image for the same
// prompt, seed and scheduler within 2/255 mean absolute pixel difference (tests/data/fixtures/builtin_reference.*,
// written by models/builtin/train/reference_fixture.py from the same fp16 folder).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <nlohmann/json.hpp>

#include "models/pipeline/text_to_image.h"
#include "models/resources.h"
#include "models/safetensors.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class BuiltinModel : public test::VulkanTest {};

TEST_F(BuiltinModel, MatchesDiffusersForTheSameSeedAndScheduler) {
  // Python's json writes diffusers' lambda_min_clipped = -inf as -Infinity, which is not JSON.
  std::ifstream in(test::dataPath("fixtures/builtin_reference.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t p; (p = text.find("-Infinity")) != std::string::npos;) text.replace(p, 9, "null");
  nlohmann::json meta = nlohmann::json::parse(text);
  auto fx = models::SafetensorsFile::open(test::dataPath("fixtures/builtin_reference.safetensors"));
  const double tolerance = meta.at("tolerance_mean_abs");
  ASSERT_LE(tolerance, 2.0 / 255 + 1e-9);
  pipeline::TextToImage t2i(ctx(), {.modelPath = models::resourcePath("models/builtin/sdgen-tiny")});
  for (const auto& c : meta.at("cases")) {
    pipeline::GenerationRequest req;
    req.prompt = c.at("prompt");
    req.negativePrompt = c.at("negative_prompt");
    req.seed = c.at("seed");
    req.steps = c.at("steps");
    req.cfgScale = c.at("cfg");
    req.width = c.at("width");
    req.height = c.at("height");
    auto kind = sampling::parseSamplerKind(c.at("sampler").get<std::string>());
    ASSERT_TRUE(kind.has_value());
    req.sampler = *kind;
    pipeline::Image img = t2i.generate(req);
    std::vector<float> want = fx.readAsF32(c.at("tensor_prefix").get<std::string>() + "image");
    ASSERT_EQ(img.pixels.size(), want.size());
    double sum = 0;
    for (size_t i = 0; i < want.size(); ++i) sum += std::abs(double(img.pixels[i]) - want[i]);
    EXPECT_LE(sum / want.size(), tolerance) << req.prompt << " (" << c.at("sampler") << ", seed " << req.seed << ")";
  }
}

// The conv scratch that every graph of a generation shares ends at its largest need: the VAE decode's convs grow
// it level by level, and a graph recorded before the decode (the step, the text encoder) would keep the smaller
// allocations it outgrew (session 51: a few hundred MiB at 512^2 on the H100). Recording passes free what a pass
// outgrew of its own, and the decode sizes the scratch before the other graphs record (LatentDecoding::reserve).
TEST_F(BuiltinModel, TheConvScratchHoldsOnlyItsLargestNeed) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = models::resourcePath("models/builtin/sdgen-tiny")});
  pipeline::GenerationRequest req;
  req.prompt = "a red circle";
  req.steps = 2;
  req.width = req.height = 128;
  t2i.generate(req);
  const pipeline::MemoryReport first = t2i.memoryReport();
  EXPECT_GT(first.convScratchNeedBytes, 0u);
  EXPECT_EQ(first.convScratchBytes, first.convScratchNeedBytes);
  req.seed = 7;
  t2i.generate(req);  // the same graphs again: nothing recorded, nothing grows
  EXPECT_EQ(t2i.memoryReport().convScratchBytes, first.convScratchBytes);
}

}  // namespace
}  // namespace sdgen
