// The built-in model draws what its prompts ask for: for the 63-prompt grid of
// tests/data/fixtures/builtin_semantic_grid.json (every color x shape, three cells each), the engine generates each
// image at the model's default settings and the image analysis (image_analysis.h) must find the prompt's color,
// shape and cell in at least 80% of them. diffusers' analysis of its own images of the same prompts and seeds is
// printed next to ours.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/pipeline/text_to_image.h"
#include "models/resources.h"
#include "models/sampling/sampler_kind.h"
#include "tests/builtin/image_analysis.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

class BuiltinSemantics : public test::VulkanTest {};

TEST_F(BuiltinSemantics, DrawsThePromptedColorShapeAndPosition) {
  nlohmann::json grid = nlohmann::json::parse(std::ifstream(test::dataPath("fixtures/builtin_semantic_grid.json")));
  const std::string model = models::resourcePath("models/builtin/sdgen-tiny");
  // The grid was scored at the model's defaults; the test must use the same ones.
  nlohmann::json defaults = nlohmann::json::parse(std::ifstream(model + "/sdgen.json")).at("defaults");
  const auto& settings = grid.at("settings");
  ASSERT_EQ(defaults.at("sampler"), settings.at("sampler"));
  ASSERT_EQ(defaults.at("steps"), settings.at("steps"));
  ASSERT_EQ(defaults.at("cfg_scale").get<double>(), settings.at("cfg").get<double>());
  auto kind = sampling::parseSamplerKind(settings.at("sampler").get<std::string>());
  ASSERT_TRUE(kind.has_value());

  pipeline::TextToImage t2i(ctx(), {.modelPath = model});
  int ok = 0, agree = 0, n = 0;
  for (const auto& c : grid.at("cases")) {
    pipeline::GenerationRequest req;
    req.prompt = c.at("prompt");
    req.seed = c.at("seed");
    req.steps = settings.at("steps");
    req.cfgScale = settings.at("cfg");
    req.sampler = *kind;
    req.width = defaults.at("width");
    req.height = defaults.at("height");
    pipeline::Image img = t2i.generate(req);
    std::vector<uint8_t> rgb(img.pixels.size());
    for (size_t i = 0; i < rgb.size(); ++i)  // as diffusers' numpy_to_pil: round(x * 255)
      rgb[i] = uint8_t(std::lround(std::clamp(img.pixels[i], 0.f, 1.f) * 255.f));
    test::ImageAnalysis a = test::analyseImage(rgb, img.width, img.height);
    const bool good = a.found && a.color == c.at("color") && a.shape == c.at("shape") && a.position == c.at("position");
    const auto& d = c.at("diffusers");
    const std::string cell = a.position >= 0 ? grid.at("positions")[a.position].get<std::string>() : "";
    const bool same = a.found && a.color == d.at("color") && a.shape == d.at("shape") && cell == d.at("position");
    ok += good, agree += same, ++n;
    std::printf("%-3s %-62s seed %-5d | sdgen: %-6s %-8s %-12s fill %.2f | diffusers: %-6s %-8s %-12s fill %.2f%s\n",
                good ? "ok" : "NO", req.prompt.c_str(), int(req.seed), a.color.c_str(), a.shape.c_str(), cell.c_str(),
                a.fill, d.at("color").get<std::string>().c_str(), d.at("shape").get<std::string>().c_str(),
                d.at("position").get<std::string>().c_str(), d.at("fill").get<double>(), d.at("ok") ? "" : " (NO)");
  }
  const double fraction = double(ok) / n, required = grid.at("required_fraction");
  std::printf("sdgen: %d of %d images all correct (%.1f%%, required %.0f%%); diffusers %.1f%%; the analyses agree on "
              "%d of %d\n", ok, n, 100 * fraction, 100 * required, 100 * grid.at("diffusers_ok_fraction").get<double>(),
              agree, n);
  EXPECT_GE(fraction, required);
}

}  // namespace
}  // namespace sdgen
