// CLIP text encoder weights under both names transformers writes: transformers 4's "text_model.*" and transformers
// 5's "embeddings.* / encoder.* / final_layer_norm.*" (a CLIPTextModel it did not load from a file), plus
// CLIPTextModelWithProjection's text_projection.weight. The tiny encoder of tests/data/tiny-clip-tf5 was saved by
// transformers 5.17 in both forms (tests/reference/real_checkpoints.py, section tf5text) and must match its
// float64 output; a diffusers folder reads either layout; a file with neither is an error naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/tensor_io.h"
#include "graph/executor.h"
#include "models/config/config_files.h"
#include "models/formats/model_files.h"
#include "models/formats/safetensors_weights.h"
#include "models/networks/clip_text_encoder.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

namespace fs = std::filesystem;

bool anyStartsWith(const std::vector<std::string>& names, const std::string& prefix) {
  for (const std::string& n : names)
    if (n.starts_with(prefix)) return true;
  return false;
}

class TextEncoderLayouts : public test::VulkanTest, public testing::WithParamInterface<const char*> {};

TEST_P(TextEncoderLayouts, Transformers5FilesMatchTransformers) {
  const std::string dir = test::dataPath(std::string("tiny-clip-tf5/") + GetParam());
  const std::string fixture = test::dataPath("fixtures/text_encoder_tf5.safetensors");
  // Written by tests/reference/real_checkpoints.py on the device machine; missing is a failure, not a skip.
  ASSERT_TRUE(fs::is_regular_file(dir + "/model.safetensors")) << dir << " is missing (make_fixtures.py --only tf5text)";
  ASSERT_TRUE(fs::is_regular_file(fixture)) << fixture << " is missing (make_fixtures.py --only tf5text)";

  // The file holds the layout this case is about.
  const std::vector<std::string> stored = models::SafetensorsWeights(dir + "/model.safetensors").names();
  const bool projection = std::string(GetParam()) == "text_encoder_with_projection";
  if (projection) {
    EXPECT_TRUE(anyStartsWith(stored, "text_model.embeddings.token_embedding.weight"));
    EXPECT_TRUE(anyStartsWith(stored, "text_projection.weight"));
  } else {
    EXPECT_TRUE(anyStartsWith(stored, "embeddings.token_embedding.weight"));
    EXPECT_FALSE(anyStartsWith(stored, "text_model."));
  }

  const models::ClipTextConfig config = models::loadClipTextConfig(dir + "/config.json");
  std::unique_ptr<models::WeightSource> weights = models::openTextEncoderWeights(dir + "/model.safetensors");
  EXPECT_TRUE(weights->contains("text_model.final_layer_norm.weight"));
  EXPECT_EQ(weights->contains("text_projection.weight"), projection);

  auto fx = models::SafetensorsFile::open(fixture);
  test::FixtureTensor ids = test::fixtureTensor(fx, "input_ids");
  const int64_t batch = ids.shape[0], seq = ids.shape[1], d = config.hiddenSize;
  nn::ParameterStore params(ctx(), DType::F32);
  networks::ClipTextEncoder encoder(params, config, *weights);
  std::vector<int32_t> idData(ids.values.begin(), ids.values.end());
  Allocation idMem = ctx().allocate(idData.size() * 4, "token ids");
  ctx().upload(idMem, 0, {reinterpret_cast<const uint8_t*>(idData.data()), idData.size() * 4});
  for (int skip : {0, 1}) {
    graph::Graph g;
    graph::TensorId out = g.output("hidden", {batch, seq, d}, DType::F32);
    nn::Builder b(g, DType::F32, nullptr);
    encoder.build(b, graph::indexView(idMem, {batch, seq}), skip, out);
    Allocation outMem = ctx().allocate(batch * seq * d * 4, "text out");
    graph::CompiledGraph cg(ctx(), g, {{out, graph::view(outMem, DType::F32, {batch, seq, d})}});
    cg.run();
    auto got = downloadFloats(ctx(), outMem, batch * seq * d, DType::F32);
    auto want = test::fixtureTensor(fx, skip ? "clip_skip1" : "last_hidden_state").values;
    EXPECT_LE(test::relativeError(got, want), 1e-4) << "clip skip " << skip;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, TextEncoderLayouts, testing::Values("text_encoder", "text_encoder_with_projection"));

// The synthetic SD 1.x folder's text encoder rewritten with `rename` applied to every stored name (F32 values).
void rewriteTextEncoder(const std::string& folder, const std::function<std::string(const std::string&)>& rename,
                        const std::vector<std::pair<std::string, std::vector<int64_t>>>& extra = {}) {
  const std::string path = folder + "/text_encoder/model.safetensors";
  test::SafetensorsWriter w;
  {
    models::SafetensorsWeights original(path);
    for (const std::string& name : original.names()) {
      const std::vector<int64_t> shape = original.shape(name);
      w.add(rename(name), shape, original.read(name, shape));
    }
  }
  for (const auto& [name, shape] : extra) w.add(name, shape, test::patternValues(name, test::elementCount(shape)));
  w.write(path);
}

TEST(TextEncoderFolders, BothLayoutsLoadTheSameWeights) {
  test::TempDir dir;
  const test::SyntheticModel model = test::syntheticModel(false);
  const std::string v4 = dir.file("v4"), v5 = dir.file("v5"), proj = dir.file("proj");
  for (const std::string& f : {v4, v5, proj}) test::writeDiffusersFolder(model, f);
  rewriteTextEncoder(v5, [](const std::string& n) {
    return n.starts_with("text_model.") ? n.substr(std::string("text_model.").size()) : n;
  });
  rewriteTextEncoder(proj, [](const std::string& n) { return n; }, {{"text_projection.weight", {32, 64}}});
  ASSERT_FALSE(anyStartsWith(models::SafetensorsWeights(v5 + "/text_encoder/model.safetensors").names(), "text_model."));

  const models::ModelFiles a = models::openModel(v4), b = models::openModel(v5), c = models::openModel(proj);
  test::expectSameWeights(*a.textEncoderWeights, *b.textEncoderWeights);
  EXPECT_TRUE(c.textEncoderWeights->contains("text_projection.weight"));
  EXPECT_EQ(c.textEncoderWeights->read("text_model.final_layer_norm.bias", {64}),
            a.textEncoderWeights->read("text_model.final_layer_norm.bias", {64}));
  // Messages name the tensor as the file stores it.
  test::expectErrorContaining([&] { b.textEncoderWeights->read("text_model.final_layer_norm.bias", {65}); },
                              "(stored as 'final_layer_norm.bias')");
}

TEST(TextEncoderFolders, NeitherLayoutIsAnErrorNamingFileAndTensor) {
  test::TempDir dir;
  const std::string folder = dir.file("sd");
  test::writeDiffusersFolder(test::syntheticModel(false), folder);
  // e.g. a whole CLIPModel's text tower saved under its own prefix
  rewriteTextEncoder(folder, [](const std::string& n) { return "clip." + n; });
  const std::string file = folder + "/text_encoder/model.safetensors";
  for (auto open : {std::function<void()>([&] { models::openModel(folder); }),
                    std::function<void()>([&] { models::openTextEncoderWeights(file); })}) {
    const std::string msg = test::errorOf(open);
    for (const std::string part : {file, std::string("'text_model.embeddings.token_embedding.weight'"),
                                   std::string("'embeddings.token_embedding.weight'")})
      EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
  }
}

}  // namespace
}  // namespace sdgen
