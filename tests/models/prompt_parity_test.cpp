// Webui-syntax prompts against the reference of tests/reference/prompt_weighting.py: the token windows and
// weights that webui's rules give (tokenized by transformers), and the conditioning that transformers'
// CLIPTextModel computes on those windows with webui's emphasis, within 1e-4 of the reference's scale (fp32).
// The fixtures (fixtures/prompt_weighting_sd{1,2}.*) are written on the device machine by
//   bash scripts/device/make-fixtures.sh --only prompts      (docs/reference-fixtures.md)
// and the comparison is skipped until they are committed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/formats/model_files.h"
#include "models/networks/clip_text_encoder.h"
#include "models/prompt/conditioning_windows.h"
#include "models/prompt/emphasis.h"
#include "models/prompt/prompt_chunks.h"
#include "models/safetensors.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

// The long case of the fixture script (LONG_PROMPT in prompt_weighting.py): more than 75 tokens, cut at a comma.
constexpr const char* kLongPrompt =
    "masterpiece, best quality, a lighthouse on a rocky coast at dusk, crashing waves, dramatic clouds, "
    "golden hour light, seagulls in the distance, a small wooden boat, wet rocks, moss, long exposure, "
    "cinematic composition, highly detailed, sharp focus, volumetric light, warm and cold colors, "
    "a winding path to the door, a red roof, an old keeper with a lantern, stars appearing in the sky, "
    "film grain, 35mm photograph";

class PromptParity : public test::VulkanTest, public testing::WithParamInterface<const char*> {};

// Holds without the fixture: the long case exercises what it claims (two chunks, the first cut at a comma).
TEST_P(PromptParity, LongCaseIsCutAtAComma) {
  models::ModelFiles m = models::openModel(test::dataPath(std::string("tiny-") + GetParam()));
  prompt::TokenWindows w = prompt::chunkPrompt(prompt::parsePromptAttention(kLongPrompt), *m.tokenizer);
  ASSERT_EQ(w.windows(), 2u);
  const int32_t comma = *m.tokenizer->vocabularyId(",</w>");
  // The first window's last content token is the comma, and it holds fewer than 75 tokens.
  const auto eos = std::find(w.ids.begin() + 1, w.ids.begin() + 77, m.tokenizer->eosId());
  ASSERT_LT(eos - w.ids.begin(), 76);
  EXPECT_EQ(*(eos - 1), comma);
  EXPECT_GT(m.tokenizer->contentIds(kLongPrompt).size(), 75u);
}

TEST_P(PromptParity, ConditioningMatchesTransformers) {
  const std::string which = GetParam();
  const std::string base = test::dataPath("fixtures/prompt_weighting_" + which);
  // Committed with the other fixtures; a missing file is a failure, not a skip.
  ASSERT_TRUE(std::filesystem::exists(base + ".safetensors") && std::filesystem::exists(base + ".json"))
      << "fixture missing: " << base << ".{json,safetensors}; regenerate with "
                 << "`bash scripts/device/make-fixtures.sh --only prompts` on the device machine "
                 << "(docs/reference-fixtures.md)";
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(base + ".json"));
  auto fx = models::SafetensorsFile::open(base + ".safetensors");
  models::ModelFiles m = models::openModel(test::dataPath("tiny-" + which));
  nn::ParameterStore params(ctx(), DType::F32);
  networks::ClipTextEncoder encoder(params, m.textEncoderConfig, *m.textEncoderWeights);
  const int64_t seq = encoder.sequenceLength(), d = m.textEncoderConfig.hiddenSize;

  ASSERT_FALSE(meta.at("cases").empty());
  for (const auto& [name, c] : meta.at("cases").items()) {
    SCOPED_TRACE("case " + name);
    const prompt::ConditioningWindows windows = prompt::makeConditioningWindows(
        *m.tokenizer, prompt::PromptSyntax::Webui, c.at("prompt").get<std::string>(),
        c.at("negative_prompt").get<std::string>(), true);
    ASSERT_EQ(windows.chunks, c.at("chunks").get<size_t>());
    const test::FixtureTensor ids = test::fixtureTensor(fx, name + ".input_ids");
    const test::FixtureTensor weights = test::fixtureTensor(fx, name + ".weights");
    ASSERT_EQ(ids.values.size(), windows.ids.size());
    for (size_t i = 0; i < ids.values.size(); ++i) {
      ASSERT_EQ(windows.ids[i], static_cast<int32_t>(ids.values[i])) << "window " << i / seq << " token " << i % seq;
      ASSERT_EQ(windows.weights[i], weights.values[i]) << "window " << i / seq << " token " << i % seq;
    }

    // The encoder on every window (one batch), then the emphasis per half, as the pipeline does.
    const int64_t batch = int64_t(windows.windows());
    Allocation idMem = ctx().allocate(windows.ids.size() * 4, "token ids");
    ctx().upload(idMem, 0, {reinterpret_cast<const uint8_t*>(windows.ids.data()), windows.ids.size() * 4});
    graph::Graph g;
    graph::TensorId out = g.output("hidden", {batch, seq, d}, DType::F32);
    nn::Builder b(g, DType::F32, nullptr);
    encoder.build(b, graph::indexView(idMem, {batch, seq}), 0, out);
    Allocation outMem = ctx().allocate(uint64_t(batch) * seq * d * 4, "text out");
    graph::CompiledGraph cg(ctx(), g, {{out, graph::view(outMem, DType::F32, {batch, seq, d})}});
    cg.run();
    std::vector<float> hidden = downloadFloats(ctx(), outMem, size_t(batch * seq * d), DType::F32);
    EXPECT_LE(test::relativeError(hidden, test::fixtureTensor(fx, name + ".hidden").values), 1e-4);
    const size_t half = windows.chunks * size_t(seq);
    for (size_t k = 0; k < 2; ++k)
      prompt::applyEmphasis(std::span<float>(hidden).subspan(k * half * d, half * d),
                            std::span<const float>(windows.weights).subspan(k * half, half), size_t(seq), size_t(d));
    const test::FixtureTensor want = test::fixtureTensor(fx, name + ".conditioning");
    ASSERT_EQ(want.shape, (std::vector<int64_t>{2, int64_t(half), d}));
    EXPECT_LE(test::relativeError(hidden, want.values), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, PromptParity, testing::Values("sd1", "sd2"));

}  // namespace
}  // namespace sdgen
