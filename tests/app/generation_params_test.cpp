// The "parameters" text, compared character for character with what stable-diffusion-webui writes for the same
// settings (modules/processing.py create_infotext, modules/infotext_utils.py quote).
#include <gtest/gtest.h>

#include "app/generation_params.h"

namespace sdgen::app {
namespace {

using sampling::SamplerKind;

GenerationParams example() {
  GenerationParams p;
  p.prompt = "a cat";
  p.negativePrompt = "blurry";
  p.steps = 20;
  p.sampler = SamplerKind::EulerAncestral;
  p.cfgScale = 7.5f;
  p.seed = 42;
  p.width = 512;
  p.height = 512;
  p.modelName = "sdgen-tiny";
  p.clipSkip = 2;
  p.version = "sdgen 0.1.0";
  return p;
}

TEST(GenerationParams, WebuiLayout) {
  EXPECT_EQ(formatGenerationParams(example()),
            "a cat\nNegative prompt: blurry\nSteps: 20, Sampler: Euler a, CFG scale: 7.5, Seed: 42, Size: 512x512, "
            "Model: sdgen-tiny, Clip skip: 2, Version: sdgen 0.1.0");
}

TEST(GenerationParams, NoNegativePromptLineAndDefaultClipSkipOmitted) {
  auto p = example();
  p.negativePrompt.clear();
  p.clipSkip = 1;
  p.cfgScale = 7.0f;
  p.seed = 18446744073709551615ull;
  p.width = 768;
  p.height = 512;
  EXPECT_EQ(formatGenerationParams(p),
            "a cat\nSteps: 20, Sampler: Euler a, CFG scale: 7, Seed: 18446744073709551615, Size: 768x512, "
            "Model: sdgen-tiny, Version: sdgen 0.1.0");
}

TEST(GenerationParams, PromptSyntaxOnlyWhenPlain) {
  auto p = example();
  EXPECT_EQ(formatGenerationParams(p).find("Prompt syntax"), std::string::npos);  // webui: the default
  p.promptSyntax = prompt::PromptSyntax::Plain;
  EXPECT_NE(formatGenerationParams(p).find(", Clip skip: 2, Prompt syntax: plain, Version: sdgen 0.1.0"),
            std::string::npos)
      << formatGenerationParams(p);
}

TEST(GenerationParams, SamplerNamesAndKarras) {
  auto p = example();
  p.karras = true;
  p.sampler = SamplerKind::DpmPP2M;
  EXPECT_NE(formatGenerationParams(p).find(", Sampler: DPM++ 2M Karras, "), std::string::npos);
  p.karras = false;
  p.sampler = SamplerKind::Ddim;
  EXPECT_NE(formatGenerationParams(p).find(", Sampler: DDIM, "), std::string::npos);
  p.sampler = SamplerKind::Euler;
  EXPECT_NE(formatGenerationParams(p).find(", Sampler: Euler, "), std::string::npos);
  // The samplers of issue 21 in webui's spelling; webui 1.9's "Schedule type" for the non-Karras schedules.
  const std::pair<SamplerKind, const char*> names[] = {
      {SamplerKind::Heun, "Heun"},          {SamplerKind::Dpm2, "DPM2"},          {SamplerKind::Dpm2Ancestral, "DPM2 a"},
      {SamplerKind::DpmPP2SAncestral, "DPM++ 2S a"}, {SamplerKind::DpmPPSde, "DPM++ SDE"},
      {SamplerKind::DpmPP2MSde, "DPM++ 2M SDE"}, {SamplerKind::Lms, "LMS"}, {SamplerKind::UniPC, "UniPC"},
      {SamplerKind::Lcm, "LCM"}};
  for (const auto& [kind, name] : names) {
    p.sampler = kind;
    EXPECT_NE(formatGenerationParams(p).find(", Sampler: " + std::string(name) + ", "), std::string::npos) << name;
  }
  p.sampler = SamplerKind::Heun;
  p.exponential = true;
  EXPECT_NE(formatGenerationParams(p).find(", Sampler: Heun, Schedule type: Exponential, CFG scale"), std::string::npos);
}

TEST(GenerationParams, QuotingLikeWebui) {
  EXPECT_EQ(quoteParamValue("plain name"), "plain name");
  EXPECT_EQ(quoteParamValue("a,b"), "\"a,b\"");
  EXPECT_EQ(quoteParamValue("C:\\models\\x"), "\"C:\\\\models\\\\x\"");
  EXPECT_EQ(quoteParamValue("say \"hi\": now"), "\"say \\\"hi\\\": now\"");
  EXPECT_EQ(quoteParamValue("two\nlines"), "\"two\\nlines\"");
  EXPECT_EQ(quoteParamValue("caf\xC3\xA9, ok"), "\"caf\xC3\xA9, ok\"");  // non-ASCII kept (ensure_ascii=False)
  EXPECT_EQ(quoteParamValue("tab\there: x"), "\"tab\\there: x\"");
  auto p = example();
  p.modelName = "v1-5, pruned";
  EXPECT_NE(formatGenerationParams(p).find(", Model: \"v1-5, pruned\", "), std::string::npos);
}

TEST(GenerationParams, PromptsAreWrittenVerbatimAndTheWholeTextStripped) {
  auto p = example();
  p.prompt = "masterpiece, (cat:1.2)\nsecond line";
  EXPECT_EQ(formatGenerationParams(p).substr(0, p.prompt.size() + 1), p.prompt + "\n");
  p.prompt = "";
  p.negativePrompt = "";
  const std::string s = formatGenerationParams(p);
  EXPECT_EQ(s.substr(0, 7), "Steps: ");  // webui's .strip(): no blank first line for an empty prompt
  p.prompt = "  padded  ";
  EXPECT_EQ(formatGenerationParams(p).substr(0, 10), "padded  \nS");  // only the ends of the whole text
}

}  // namespace
}  // namespace sdgen::app

namespace sdgen::app {
namespace {

TEST(GenerationParams, SdxlMicroConditioningOnlyWhenGiven) {
  GenerationParams p = example();
  p.micro.originalSize = std::pair{2048, 1536};
  p.micro.targetSize = std::pair{1024, 1024};
  EXPECT_EQ(formatGenerationParams(p),
            "a cat\nNegative prompt: blurry\nSteps: 20, Sampler: Euler a, CFG scale: 7.5, Seed: 42, Size: 512x512, "
            "Model: sdgen-tiny, Clip skip: 2, Original size: 2048x1536, Target size: 1024x1024, Version: sdgen 0.1.0");
  p.micro = {};
  p.micro.cropTopLeft = std::pair{0, 128};
  EXPECT_NE(formatGenerationParams(p).find(", Crop: 0x128, Version"), std::string::npos);
  p.micro = {};
  p.micro.negativeOriginalSize = std::pair{512, 512};
  p.micro.negativeTargetSize = std::pair{1024, 1024};
  EXPECT_NE(formatGenerationParams(p).find(", Negative original size: 512x512, Negative target size: 1024x1024, Version"),
            std::string::npos);
}

}  // namespace
}  // namespace sdgen::app
