// LoRA files (models/lora/): both layouts read and matched to tests/data/tiny-sd1's weights, scale * alpha / rank,
// and every kind of bad file refused with a message naming the file and the tensor. CPU only.
#include <gtest/gtest.h>

#include <filesystem>

#include "models/formats/model_files.h"
#include "models/lora/lora_file.h"
#include "models/lora/lora_library.h"
#include "models/lora/lora_targets.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using lora::Component;

const char* kToQ = "down_blocks.0.attentions.0.transformer_blocks.0.attn1.to_q";  // [32, 32]
const char* kConv1 = "down_blocks.0.resnets.0.conv1";                              // [32, 32, 3, 3]
const char* kTeQ = "text_model.encoder.layers.0.self_attn.q_proj";                // [32, 32]

std::string kohya(const std::string& prefix, std::string module) {
  for (char& c : module)
    if (c == '.') c = '_';
  return prefix + module;
}

std::vector<float> values(size_t n, float seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(int((i * 37 + size_t(seed * 11)) % 64) - 32) / 256.f;
  return v;
}

// A kohya module: down [rank, in...], up [out, rank(, 1, 1)], optional scalar alpha (F16 as kohya writes).
void addKohya(test::SafetensorsWriter& w, const std::string& key, std::vector<int64_t> down, std::vector<int64_t> up,
              std::optional<float> alpha) {
  w.add(key + ".lora_down.weight", down, values(test::elementCount(down), 1), "F16");
  w.add(key + ".lora_up.weight", up, values(test::elementCount(up), 2), "F16");
  if (alpha) w.add(key + ".alpha", {}, {*alpha}, "F16");
}

class LoraFiles : public testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = new models::ModelFiles(models::openModel(test::dataPath("tiny-sd1"))); }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  std::string write(const test::SafetensorsWriter& w, const std::string& name) {
    const std::string p = dir_.file(name);
    w.write(p);
    return p;
  }
  lora::LoraTargets resolve(const std::string& path, float scale = 1.f) {
    return lora::resolveLoras({{lora::readLoraFile(path), scale, scale}}, *model_->unetWeights,
                              model_->textEncoderWeights.get());
  }
  test::TempDir dir_;
  static models::ModelFiles* model_;
};
models::ModelFiles* LoraFiles::model_ = nullptr;

TEST_F(LoraFiles, KohyaLayoutWithLoConAndAlpha) {
  test::SafetensorsWriter w;
  addKohya(w, kohya("lora_unet_", kToQ), {4, 32}, {32, 4}, 2.f);
  addKohya(w, kohya("lora_unet_", kConv1), {4, 32, 3, 3}, {32, 4, 1, 1}, 2.f);
  addKohya(w, kohya("lora_te_", kTeQ), {4, 32}, {32, 4}, 2.f);
  const std::string path = write(w, "kohya.safetensors");
  auto f = lora::readLoraFile(path);
  EXPECT_STREQ(f->layout, "kohya");
  ASSERT_EQ(f->modules.size(), 3u);
  for (const lora::LoraModule& m : f->modules) {
    EXPECT_EQ(m.rank, 4);
    EXPECT_EQ(m.alpha, 2.f);
    EXPECT_EQ(*m.up, values(m.up->size(), 2));  // F16 values read back as they were written
  }
  lora::LoraTargets t = resolve(path, 0.8f);
  ASSERT_EQ(t.size(), 3u);
  for (auto [c, name] : {std::pair{Component::Unet, std::string(kToQ)}, {Component::Unet, std::string(kConv1)},
                         {Component::TextEncoder, std::string(kTeQ)}}) {
    const auto* d = t.find(c, name + ".weight");
    ASSERT_NE(d, nullptr) << name;
    ASSERT_EQ(d->size(), 1u);
    EXPECT_FLOAT_EQ(d->front().scale, 0.8f * 2.f / 4.f);
    EXPECT_EQ(d->front().rank, 4);
  }
}

TEST_F(LoraFiles, KohyaWithoutAnyAlphaUsesTheRank) {
  test::SafetensorsWriter w;
  addKohya(w, kohya("lora_unet_", kToQ), {8, 32}, {32, 8}, std::nullopt);
  lora::LoraTargets t = resolve(write(w, "plain.safetensors"), 0.5f);
  EXPECT_FLOAT_EQ(t.find(Component::Unet, std::string(kToQ) + ".weight")->front().scale, 0.5f);
}

TEST_F(LoraFiles, PeftLayoutBothTextEncoderNamings) {
  test::SafetensorsWriter w;
  w.add(std::string("unet.") + kToQ + ".lora_A.weight", {4, 32}, values(128, 1));
  w.add(std::string("unet.") + kToQ + ".lora_B.weight", {32, 4}, values(128, 2));
  // transformers 5 names (no "text_model.") and transformers 4 names both address the text encoder
  w.add("text_encoder.encoder.layers.0.self_attn.q_proj.lora_A.weight", {4, 32}, values(128, 3));
  w.add("text_encoder.encoder.layers.0.self_attn.q_proj.lora_B.weight", {32, 4}, values(128, 4));
  w.add("text_encoder.text_model.encoder.layers.1.mlp.fc1.lora_A.weight", {2, 32}, values(64, 5));
  w.add("text_encoder.text_model.encoder.layers.1.mlp.fc1.lora_B.weight", {64, 2}, values(128, 6));
  const std::string path = write(w, "peft.safetensors");
  EXPECT_STREQ(lora::readLoraFile(path)->layout, "PEFT");
  lora::LoraTargets t = resolve(path, -0.5f);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_FLOAT_EQ(t.find(Component::Unet, std::string(kToQ) + ".weight")->front().scale, -0.5f);
  EXPECT_NE(t.find(Component::TextEncoder, std::string(kTeQ) + ".weight"), nullptr);
  EXPECT_NE(t.find(Component::TextEncoder, "text_model.encoder.layers.1.mlp.fc1.weight"), nullptr);
}

TEST_F(LoraFiles, ScaleZeroAddsNothingButIsStillChecked) {
  test::SafetensorsWriter w;
  addKohya(w, kohya("lora_unet_", kToQ), {4, 32}, {32, 4}, 4.f);
  const std::string path = write(w, "zero.safetensors");
  EXPECT_TRUE(resolve(path, 0.f).empty());
  test::SafetensorsWriter bad;
  addKohya(bad, kohya("lora_unet_", kToQ), {4, 31}, {32, 4}, 4.f);
  const std::string badPath = write(bad, "zero_bad.safetensors");
  test::expectErrorContaining([&] { resolve(badPath, 0.f); }, "do not fit");
}

TEST_F(LoraFiles, WrongShapesNameTheFileTensorAndModelWeight) {
  test::SafetensorsWriter w;
  addKohya(w, kohya("lora_unet_", kToQ), {4, 48}, {32, 4}, 4.f);  // in 48, the model's to_q has 32
  const std::string path = write(w, "shapes.safetensors");
  const std::string msg = test::errorOf([&] { resolve(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find(kohya("lora_unet_", kToQ) + ".lora_down.weight' [4,48]"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::string(kToQ) + ".weight' [32,32]"), std::string::npos) << msg;

  test::SafetensorsWriter rank;
  addKohya(rank, kohya("lora_unet_", kToQ), {4, 32}, {32, 3}, 4.f);
  const std::string rankPath = write(rank, "rank.safetensors");
  test::expectErrorContaining([&] { lora::readLoraFile(rankPath); }, "has rank 3 (shape [32,3]) but");

  test::SafetensorsWriter conv;  // a LoCon whose kernel is not the conv's
  addKohya(conv, kohya("lora_unet_", kConv1), {4, 32, 1, 9}, {32, 4, 1, 1}, 4.f);
  const std::string convPath = write(conv, "conv.safetensors");
  test::expectErrorContaining([&] { resolve(convPath); }, "[32,32,3,3]: a LoRA for another model?");
}

TEST_F(LoraFiles, MissingOrBadAlpha) {
  test::SafetensorsWriter w;
  addKohya(w, kohya("lora_unet_", kToQ), {4, 32}, {32, 4}, 4.f);
  addKohya(w, kohya("lora_unet_", kConv1), {4, 32, 3, 3}, {32, 4, 1, 1}, std::nullopt);
  const std::string path = write(w, "alpha.safetensors");
  const std::string msg = test::errorOf([&] { lora::readLoraFile(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("has no '" + kohya("lora_unet_", kConv1) + ".alpha' while 1 of the file's 2 modules have one"),
            std::string::npos)
      << msg;

  test::SafetensorsWriter vec;
  addKohya(vec, kohya("lora_unet_", kToQ), {4, 32}, {32, 4}, std::nullopt);
  vec.add(kohya("lora_unet_", kToQ) + ".alpha", {2}, {1.f, 2.f});
  const std::string vecPath = write(vec, "alpha_vec.safetensors");
  test::expectErrorContaining([&] { lora::readLoraFile(vecPath); }, ".alpha': alpha has shape [2], expected a scalar");
}

TEST_F(LoraFiles, TruncatedAndNonLoraFiles) {
  test::SafetensorsWriter w;
  addKohya(w, kohya("lora_unet_", kToQ), {4, 32}, {32, 4}, 4.f);
  const std::string bytes = w.bytes();
  const std::string truncated = dir_.write("truncated.safetensors", bytes.substr(0, bytes.size() - 100));
  test::expectErrorContaining([&] { lora::readLoraFile(truncated); }, truncated);
  test::expectErrorContaining([&] { lora::readLoraFile(dir_.file("absent.safetensors")); }, "absent.safetensors");

  test::SafetensorsWriter model;  // a checkpoint, not a LoRA
  model.add("down_blocks.0.resnets.0.conv1.weight", {2, 2}, {0, 0, 0, 0});
  const std::string modelPath = write(model, "model.safetensors");
  test::expectErrorContaining([&] { lora::readLoraFile(modelPath); },
                              "'down_blocks.0.resnets.0.conv1.weight': not a PEFT LoRA name");

  test::SafetensorsWriter empty;
  const std::string emptyPath = write(empty, "empty.safetensors");
  test::expectErrorContaining([&] { lora::readLoraFile(emptyPath); }, "holds no tensors");
}

TEST_F(LoraFiles, UnsupportedVariantsAndHalfModules) {
  auto refuse = [&](const std::function<void(test::SafetensorsWriter&)>& fill, const std::string& needle) {
    test::SafetensorsWriter w;
    fill(w);
    const std::string p = write(w, "variant.safetensors");
    test::expectErrorContaining([&] { lora::readLoraFile(p); }, needle);
  };
  const std::string q = kohya("lora_unet_", kToQ);
  refuse([&](auto& w) { w.add(q + ".hada_w1_a", {32, 4}, values(128, 1)); }, "LoHa");
  refuse([&](auto& w) { w.add(q + ".lokr_w1", {4, 4}, values(16, 1)); }, "LoKr");
  refuse([&](auto& w) { addKohya(w, q, {4, 32}, {32, 4}, 4.f); w.add(q + ".dora_scale", {32, 1}, values(32, 1)); },
         "DoRA");
  refuse([&](auto& w) { w.add(q + ".lora_down.weight", {4, 32}, values(128, 1)); }, "has no matching up");
  refuse([&](auto& w) { addKohya(w, q, {4, 32}, {32, 4}, 4.f); w.add("unet.x.lora_A.weight", {4, 32}, values(128, 1)); },
         "mixes the kohya and PEFT layouts");
  refuse([&](auto& w) { w.add("unet.down_blocks.0.attentions.0.transformer_blocks.0.attn1.processor.to_q_lora.down.weight",
                              {4, 32}, values(128, 1)); },
         "old diffusers attention-processor LoRA layout");
  refuse([&](auto& w) {
    addKohya(w, q, {4, 32}, {32, 4}, std::nullopt);
    w.addRaw(q + ".alpha", "I64", {}, std::string(8, '\0'));
  }, "dtype I64");
}

TEST_F(LoraFiles, ModulesTheModelDoesNotHaveAreListed) {
  test::SafetensorsWriter w;
  addKohya(w, kohya("lora_unet_", kToQ), {4, 32}, {32, 4}, 4.f);
  addKohya(w, "lora_unet_down_blocks_7_attentions_0_proj_in", {4, 32}, {32, 4}, 4.f);
  const std::string path = write(w, "unknown.safetensors");
  test::expectErrorContaining([&] { resolve(path); },
                              "1 of its 2 modules match no weight of this model "
                              "(lora_unet_down_blocks_7_attentions_0_proj_in)");
}

TEST_F(LoraFiles, ALoraMadeForSd2IsRefusedOnSd1) {
  // Every linear weight of tiny-sd2's text encoder and UNet (SD 2.x: a third text encoder layer, linear
  // proj_in/out), as a kohya LoRA: tiny-sd1 has no layer 2.
  models::ModelFiles sd2 = models::openModel(test::dataPath("tiny-sd2"));
  test::SafetensorsWriter w;
  for (auto [source, prefix] : {std::pair{sd2.textEncoderWeights.get(), "lora_te_"}, {sd2.unetWeights.get(), "lora_unet_"}})
    for (const std::string& name : source->names()) {
      std::vector<int64_t> s = source->shape(name);
      if (s.size() != 2 || name.size() < 7 || name.compare(name.size() - 7, 7, ".weight") != 0 ||
          name.find("embedding") != std::string::npos)
        continue;
      addKohya(w, kohya(prefix, name.substr(0, name.size() - 7)), {2, s[1]}, {s[0], 2}, 1.f);
    }
  const std::string path = write(w, "sd2.safetensors");
  test::expectErrorContaining([&] { resolve(path); }, "lora_te_text_model_encoder_layers_2_");
  test::expectErrorContaining([&] { resolve(path); }, "a LoRA for another model (SD 2.x, SDXL)");
}

TEST_F(LoraFiles, TheLibraryReadsEachFileOnceWhileItIsUsed) {
  test::SafetensorsWriter w;
  addKohya(w, kohya("lora_unet_", kToQ), {4, 32}, {32, 4}, 4.f);
  const std::string path = write(w, "cached.safetensors");
  lora::LoraLibrary lib;
  auto first = lib.file(path);
  EXPECT_EQ(lib.file(path), first);  // the same parsed file: not read again
  const std::vector<lora::LoraSpec> current = {{path, 0.5f, 0.5f}};
  lib.keepOnly({&current});
  EXPECT_EQ(lib.file(path), first);
  lib.keepOnly({});
  EXPECT_NE(lib.file(path), first);  // forgotten, read again
}

TEST(LoraArguments, FileAndScale) {
  lora::LoraSpec s = lora::parseLoraArgument("/x/style.safetensors:0.7", "--lora");
  EXPECT_EQ(s.path, "/x/style.safetensors");
  EXPECT_FLOAT_EQ(s.unetScale, 0.7f);
  EXPECT_FLOAT_EQ(s.textScale, 0.7f);
  s = lora::parseLoraArgument("a:b/style.safetensors", "--lora");  // no number after the last ':'
  EXPECT_EQ(s.path, "a:b/style.safetensors");
  EXPECT_FLOAT_EQ(s.unetScale, 1.f);
  s = lora::parseLoraArgument("s.safetensors:-1.5", "--lora");
  EXPECT_FLOAT_EQ(s.unetScale, -1.5f);
  test::expectErrorContaining([] { lora::parseLoraArgument(":0.5", "--lora"); }, "--lora ':0.5': no file named");
}

TEST(LoraLibraryLookup, ByNameInTheFolderAndItsSubfolders) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("b/c"));
  dir.write("top.safetensors", "x");
  dir.write("b/c/deep.safetensors", "x");
  dir.write("b/deep.txt", "x");
  lora::LoraLibrary lib(dir.file(""));
  EXPECT_EQ(std::filesystem::path(lib.findByName("top", "<lora:top>")), std::filesystem::path(dir.file("top.safetensors")));
  EXPECT_EQ(std::filesystem::path(lib.findByName("deep", "<lora:deep>")),
            std::filesystem::path(dir.file("b/c/deep.safetensors")));
  test::expectErrorContaining([&] { lib.findByName("nope", "<lora:nope:1>"); },
                              "prompt tag '<lora:nope:1>': no nope.safetensors in the LoRA folder");
  test::expectErrorContaining([&] { lib.findByName("../x", "<lora:../x>"); }, "without folders");
  test::expectErrorContaining([] { lora::LoraLibrary().findByName("x", "<lora:x>"); }, "give --lora-dir");
}

}  // namespace
}  // namespace sdgen
