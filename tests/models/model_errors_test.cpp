// Bad inputs at the model level, through openModel and the WeightSources: every case must fail with a message that
// names the file (and the tensor or field) involved. The raw safetensors reader has its own cases in
// safetensors_test.cpp; these check that its errors reach the user through the model loaders.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/formats/model_files.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"

namespace sdgen::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::errorOf;
using test::TempDir;

void expectAll(const std::string& msg, std::initializer_list<std::string> parts) {
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The synthetic SD 1.x checkpoint with its tensors edited before writing.
struct EditedCheckpoint {
  TempDir dir;
  test::SyntheticModel model = test::syntheticModel(false);
  std::string path = dir.file("edited.safetensors");
  OpenOptions options;
  EditedCheckpoint() {
    test::writeTinyTokenizer(dir.file("tok"));
    options.tokenizerPath = dir.file("tok");
  }
  void write() { test::writeLdmCheckpoint(model, path); }
  ModelFiles open() const { return openModel(path, options); }
};

// A synthetic SD 1.x diffusers folder.
struct Folder {
  TempDir dir;
  test::SyntheticModel model = test::syntheticModel(false);
  std::string path = dir.file("sd");
  Folder() { test::writeDiffusersFolder(model, path); }
  std::string file(const std::string& rel) const { return path + "/" + rel; }
  json readJson(const std::string& rel) const { return json::parse(readBytes(file(rel))); }
  void writeJson(const std::string& rel, const json& j) const { writeBytes(file(rel), j.dump()); }
};

TEST(ModelErrors, MissingPaths) {
  expectAll(errorOf([] { openModel("/nonexistent/model.safetensors"); }),
            {"'/nonexistent/model.safetensors' does not exist"});
  Folder f;
  fs::remove(f.file("unet/diffusion_pytorch_model.safetensors"));
  expectAll(errorOf([&] { openModel(f.path); }), {"no weights in '" + f.file("unet") + "'"});
  Folder g;
  fs::remove_all(g.file("tokenizer"));
  expectAll(errorOf([&] { openModel(g.path); }), {"tokenizer folder '" + g.file("tokenizer") + "' does not exist"});
  Folder h;
  fs::remove(h.file("vae/config.json"));
  expectAll(errorOf([&] { openModel(h.path); }), {h.file("vae/config.json"), "does not exist"});
}

TEST(ModelErrors, MissingTensor) {
  // A diffusers folder: found when a network asks for it.
  Folder f;
  ModelFiles m = openModel(f.path);
  expectAll(errorOf([&] { m.unetWeights->read("down_blocks.9.resnets.0.conv1.weight", {1}); }),
            {"tensor 'down_blocks.9.resnets.0.conv1.weight' not found in", f.file("unet/diffusion_pytorch_model.safetensors")});
  // A single file: the mapping needs every tensor of the inferred architecture.
  EditedCheckpoint c;
  std::erase_if(c.model.unet, [](const test::SyntheticParam& p) { return p.name == "up_blocks.1.resnets.2.conv2.weight"; });
  c.write();
  expectAll(errorOf([&] { c.open(); }),
            {c.path, "has no tensor 'model.diffusion_model.output_blocks.5.0.out_layers.3.weight'", "UNet"});
  EditedCheckpoint d;
  std::erase_if(d.model.vae, [](const test::SyntheticParam& p) { return p.name == "decoder.conv_out.weight"; });
  d.write();
  expectAll(errorOf([&] { d.open(); }), {d.path, "'first_stage_model.decoder.conv_out.weight'", "VAE"});
}

TEST(ModelErrors, WrongShape) {
  Folder f;
  ModelFiles m = openModel(f.path);
  expectAll(errorOf([&] { m.unetWeights->read("conv_in.weight", {64, 4, 1, 1}); }),
            {"tensor 'conv_in.weight'", f.file("unet/diffusion_pytorch_model.safetensors"), "has shape [64,4,3,3]",
             "expected [64,4,1,1]"});
  EditedCheckpoint c;
  c.write();
  ModelFiles s = c.open();
  expectAll(errorOf([&] { s.unetWeights->read("down_blocks.0.resnets.0.norm1.weight", {32}); }),
            {"'down_blocks.0.resnets.0.norm1.weight' (stored as 'model.diffusion_model.input_blocks.1.0.in_layers.0.weight')",
             c.path, "has shape [64], expected [32]"});
  // A shape that contradicts the architecture: a fused OpenCLIP projection of the wrong height.
  EditedCheckpoint d;
  d.model = test::syntheticModel(true);
  for (test::SyntheticParam& p : d.model.text)
    if (p.ldmKey == "cond_stage_model.model.transformer.resblocks.0.attn.in_proj_weight") p.ldmShape = {4 * 64, 64};
  d.write();
  expectAll(errorOf([&] { d.open(); }),
            {d.path, "'cond_stage_model.model.transformer.resblocks.0.attn.in_proj_weight' has shape [256,64]", "fused q, k, v"});
  // A time embedding that is not 4x the first level's width.
  EditedCheckpoint e;
  for (test::SyntheticParam& p : e.model.unet)
    if (p.name == "time_embedding.linear_1.weight") p.ldmShape = p.shape = {128, 64};
  e.write();
  expectAll(errorOf([&] { e.open(); }), {e.path, "time_embed.0.weight has shape [128,64]"});
}

TEST(ModelErrors, UnsupportedDtype) {
  // An F64 tensor is refused when the file is opened, naming the tensor.
  Folder f;
  const std::string unetFile = f.file("unet/diffusion_pytorch_model.safetensors");
  test::SafetensorsWriter w;
  for (const auto& [name, values] : test::expectedValues(f.model.unet)) {
    for (const auto& p : f.model.unet)
      if (p.name == name) w.add(name, p.shape, values);
  }
  w.addRaw("extra.f64", "F64", {1}, std::string(8, '\0'));
  w.write(unetFile);
  expectAll(errorOf([&] { openModel(f.path); }), {"tensor 'extra.f64'", unetFile, "\"F64\""});
  // An integer tensor where a weight is expected.
  Folder g;
  test::SafetensorsWriter v;
  for (const auto& p : g.model.vae) {
    if (p.name == "encoder.conv_in.bias") v.addRaw(p.name, "I32", p.shape, std::string(4 * 32, '\0'));
    else v.add(p.name, p.shape, test::patternValues(p.name, test::elementCount(p.shape)));
  }
  v.write(g.file("vae/diffusion_pytorch_model.safetensors"));
  ModelFiles m = openModel(g.path);
  expectAll(errorOf([&] { m.vaeWeights->read("encoder.conv_in.bias", {32}); }),
            {"tensor 'encoder.conv_in.bias'", g.file("vae/diffusion_pytorch_model.safetensors"), "dtype I32",
             "not a floating-point type"});
}

TEST(ModelErrors, UnknownArchitecture) {
  TempDir dir;
  fs::create_directories(dir.file("empty"));
  expectAll(errorOf([&] { openModel(dir.file("empty")); }),
            {"unknown architecture", dir.file("empty"), "has no model_index.json"});
  // Tensors of something else entirely.
  test::SafetensorsWriter other;
  other.add("layers.0.weight", {2, 2}, test::patternValues("x", 4));
  other.write(dir.file("other.safetensors"));
  expectAll(errorOf([&] { openModel(dir.file("other.safetensors")); }),
            {"unknown architecture", dir.file("other.safetensors"), "model.diffusion_model.",
             "cond_stage_model.model.", "layers (1)"});
  // SDXL's conditioner and a lone diffusers component.
  test::SafetensorsWriter xl;
  xl.add("conditioner.embedders.1.model.positional_embedding", {77, 8}, test::patternValues("p", 77 * 8));
  xl.add("model.diffusion_model.input_blocks.0.0.weight", {8, 4, 3, 3}, test::patternValues("c", 8 * 36));
  xl.write(dir.file("xl.safetensors"));
  expectAll(errorOf([&] { openModel(dir.file("xl.safetensors")); }), {"unknown architecture", "SDXL"});
  test::SafetensorsWriter unet;
  unet.add("down_blocks.0.resnets.0.conv1.weight", {8, 8, 3, 3}, test::patternValues("c", 8 * 72));
  unet.write(dir.file("unet.safetensors"));
  expectAll(errorOf([&] { openModel(dir.file("unet.safetensors")); }), {"unknown architecture", "diffusers folder"});
  // An SD 1.x file with parts no SD 1.x/2.x UNet has (a class embedding).
  EditedCheckpoint c;
  c.model.ldmExtras.push_back({"model.diffusion_model.label_emb.0.0.weight", {256, 16}});
  c.write();
  expectAll(errorOf([&] { c.open(); }), {c.path, "unexpected tensor 'model.diffusion_model.label_emb.0.0.weight'"});
  // An SDXL diffusers folder.
  Folder f;
  json index = f.readJson("model_index.json");
  index["_class_name"] = "StableDiffusionXLPipeline";
  index["text_encoder_2"] = {"transformers", "CLIPTextModelWithProjection"};
  f.writeJson("model_index.json", index);
  expectAll(errorOf([&] { openModel(f.path); }), {f.file("model_index.json"), "text_encoder_2"});
}

TEST(ModelErrors, CorruptSafetensors) {
  EditedCheckpoint c;
  c.write();
  const std::string good = readBytes(c.path);
  uint64_t headerLen;
  std::memcpy(&headerLen, good.data(), 8);

  // Truncated: the data section ends early.
  writeBytes(c.path, good.substr(0, good.size() - 1000));
  expectAll(errorOf([&] { c.open(); }), {c.path, "past the end of the data section", "truncated"});
  // Truncated inside the header.
  writeBytes(c.path, good.substr(0, 100));
  expectAll(errorOf([&] { c.open(); }), {c.path, "header length", "does not fit"});
  // A header length beyond the file.
  std::string bad = good;
  const uint64_t huge = good.size() + 5;
  std::memcpy(bad.data(), &huge, 8);
  writeBytes(c.path, bad);
  expectAll(errorOf([&] { c.open(); }), {c.path, "header length " + std::to_string(huge)});
  // Invalid JSON in the header: its closing brace replaced.
  bad = good;
  ASSERT_EQ(bad[8 + headerLen - 1], '}');
  bad[8 + headerLen - 1] = ',';
  writeBytes(c.path, bad);
  expectAll(errorOf([&] { c.open(); }), {c.path, "header is not valid JSON"});

  // Overlapping and out-of-range offsets, and a size that does not match the shape.
  json header = json::parse(good.substr(8, headerLen));
  const std::string data = good.substr(8 + headerLen);
  auto withHeader = [&](const json& h) {
    std::string text = h.dump();
    std::string out(8, '\0');
    uint64_t n = text.size();
    std::memcpy(out.data(), &n, 8);
    writeBytes(c.path, out + text + data);
  };
  json overlapping = header;
  const std::string a = "model.diffusion_model.input_blocks.0.0.bias", b = "model.diffusion_model.out.0.bias";
  overlapping[b]["data_offsets"] = overlapping[a]["data_offsets"];
  overlapping[b]["shape"] = overlapping[a]["shape"];
  withHeader(overlapping);
  expectAll(errorOf([&] { c.open(); }), {c.path, "overlapping tensor"});
  json outOfRange = header;
  uint64_t end = data.size() + 8;
  outOfRange[a]["data_offsets"] = {end - 256, end};
  withHeader(outOfRange);
  expectAll(errorOf([&] { c.open(); }), {c.path, "tensor '" + a + "'", "past the end of the data section"});
  json wrongSize = header;
  wrongSize[a]["shape"] = {63};
  withHeader(wrongSize);
  expectAll(errorOf([&] { c.open(); }), {c.path, "tensor '" + a + "'", "needs"});
}

TEST(ModelErrors, BadConfigsInFolder) {
  Folder f;
  writeBytes(f.file("unet/config.json"), "{\"sample_size\": 64,");
  expectAll(errorOf([&] { openModel(f.path); }), {f.file("unet/config.json"), "not valid JSON"});
  Folder g;
  json sched = g.readJson("scheduler/scheduler_config.json");
  sched.erase("beta_schedule");
  g.writeJson("scheduler/scheduler_config.json", sched);
  expectAll(errorOf([&] { openModel(g.path); }),
            {g.file("scheduler/scheduler_config.json"), "field 'beta_schedule' is missing"});
  // Mismatched text-encoder / UNet widths.
  Folder h;
  json unet = h.readJson("unet/config.json");
  unet["cross_attention_dim"] = 96;
  h.writeJson("unet/config.json", unet);
  expectAll(errorOf([&] { openModel(h.path); }),
            {"mismatched text-encoder/UNet widths", h.file("text_encoder/config.json"), h.file("unet/config.json"), "96"});
  Folder k;
  json text = k.readJson("text_encoder/config.json");
  text["hidden_act"] = "relu";
  k.writeJson("text_encoder/config.json", text);
  expectAll(errorOf([&] { openModel(k.path); }), {k.file("text_encoder/config.json"), "hidden_act = \"relu\""});
  Folder t;
  writeBytes(t.file("tokenizer/special_tokens_map.json"), json{{"pad_token", "<pad>"}}.dump());
  expectAll(errorOf([&] { openModel(t.path); }),
            {t.file("tokenizer/special_tokens_map.json"), "pad_token", "\"<pad>\""});
  Folder v;
  writeBytes(v.file("tokenizer/tokenizer_config.json"), json{{"model_max_length", 100}}.dump());
  expectAll(errorOf([&] { openModel(v.path); }), {v.file("tokenizer/tokenizer_config.json"), "model_max_length", "100"});
}

TEST(ModelErrors, PickleCheckpointsAreRefused) {
  TempDir dir;
  const std::string ckpt = dir.write("model.ckpt", "PK\x03\x04 not really a zip");
  expectAll(errorOf([&] { openModel(ckpt); }), {ckpt, "pickle", "safetensors"});
  // Pickle content under a .safetensors name.
  const std::string disguised = dir.write("model.safetensors", std::string("\x80\x02", 2) + std::string(64, 'x'));
  expectAll(errorOf([&] { openModel(disguised); }), {disguised, "pickle"});
}

TEST(ModelErrors, BadOptions) {
  Folder f;
  OpenOptions options;
  options.predictionType = "sample";
  expectAll(errorOf([&] { openModel(f.path, options); }), {"prediction type override 'sample'"});
  EditedCheckpoint c;
  c.write();
  c.options.imageSize = 501;  // not a multiple of the VAE's scale factor
  expectAll(errorOf([&] { c.open(); }), {"image size 501", c.path, "scale factor 2"});
}

}  // namespace
}  // namespace sdgen::models
