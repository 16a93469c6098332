// SafetensorsWeights (one file or a sharded set, prefix and renames) and the weight-file choice of a diffusers
// component folder (variants, shard indexes, pickles).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/formats/model_files.h"
#include "models/formats/safetensors_weights.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/test_support.h"

namespace sdgen::models {
namespace {

using nlohmann::json;
using test::errorOf;
using test::TempDir;

std::string writeFile(const TempDir& dir, const std::string& name,
                      const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors,
                      const std::string& dtype = "F32") {
  test::SafetensorsWriter w;
  for (const auto& [tensor, shape] : tensors) w.add(tensor, shape, test::patternValues(tensor, test::elementCount(shape)), dtype);
  std::string path = dir.file(name);
  w.write(path);
  return path;
}

TEST(SafetensorsWeights, OneFile) {
  TempDir dir;
  std::string path = writeFile(dir, "w.safetensors", {{"b.weight", {3, 2}}, {"a.bias", {3}}}, "F16");
  SafetensorsWeights w(path);
  EXPECT_EQ(w.describe(), path);
  EXPECT_EQ(w.names(), (std::vector<std::string>{"a.bias", "b.weight"}));
  EXPECT_TRUE(w.contains("a.bias"));
  EXPECT_FALSE(w.contains("c"));
  EXPECT_EQ(w.shape("b.weight"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(w.read("b.weight", {3, 2}), test::patternValues("b.weight", 6));
  test::expectErrorContaining([&] { w.read("b.weight", {2, 3}); },
                              "tensor 'b.weight' in '" + path + "' has shape [3,2], expected [2,3]");
  test::expectErrorContaining([&] { w.read("c", {1}); }, "tensor 'c' not found in " + path);
  test::expectErrorContaining([&] { w.shape("c"); }, "tensor 'c' not found in " + path);
  // Through ScopedWeights, as the network builders read.
  ScopedWeights scoped(w);
  EXPECT_EQ(scoped["b"].read("weight", {3, 2}), test::patternValues("b.weight", 6));
}

TEST(SafetensorsWeights, PrefixAndRenames) {
  TempDir dir;
  std::string path = writeFile(dir, "w.safetensors", {{"model.x.query.weight", {2, 2}}, {"model.y", {1}}, {"other.z", {1}}});
  SafetensorsWeightsOptions options;
  options.prefix = "model.";
  options.rename["x.query.weight"] = "x.to_q.weight";
  SafetensorsWeights w(path, options);
  EXPECT_EQ(w.names(), (std::vector<std::string>{"x.to_q.weight", "y"}));
  EXPECT_EQ(w.read("x.to_q.weight", {2, 2}), test::patternValues("model.x.query.weight", 4));
  EXPECT_NE(w.describe().find("prefix 'model.'"), std::string::npos);
  test::expectErrorContaining([&] { w.read("x.to_q.weight", {4}); }, "(stored as 'model.x.query.weight')");
  // Two stored names under one exposed name are ambiguous.
  options.rename["y"] = "x.to_q.weight";
  test::expectErrorContaining([&] { SafetensorsWeights bad(path, options); }, "tensor 'x.to_q.weight' appears twice");
}

TEST(SafetensorsWeights, ShardedSet) {
  TempDir dir;
  writeFile(dir, "m-00001-of-00002.safetensors", {{"a", {2}}, {"b", {3}}});
  writeFile(dir, "m-00002-of-00002.safetensors", {{"c", {4}}});
  json index = {{"metadata", {{"total_size", 36}}},
                {"weight_map", {{"a", "m-00001-of-00002.safetensors"}, {"b", "m-00001-of-00002.safetensors"},
                                {"c", "m-00002-of-00002.safetensors"}}}};
  std::string indexPath = dir.write("m.safetensors.index.json", index.dump());
  EXPECT_TRUE(isShardIndexPath(indexPath));
  EXPECT_TRUE(isShardIndexPath("x/diffusion_pytorch_model.safetensors.index.fp16.json"));
  EXPECT_FALSE(isShardIndexPath("x/config.json"));
  SafetensorsWeights w(indexPath);
  EXPECT_EQ(w.names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(w.read("c", {4}), test::patternValues("c", 4));
  EXPECT_EQ(w.read("a", {2}), test::patternValues("a", 2));
  EXPECT_NE(w.describe().find("2 shards"), std::string::npos);
  // A wrong shape names the shard that holds the tensor.
  test::expectErrorContaining([&] { w.read("c", {3}); }, "m-00002-of-00002.safetensors' has shape [4], expected [3]");

  auto indexError = [&](const json& bad) {
    std::string p = dir.write("bad.safetensors.index.json", bad.dump());
    return errorOf([&] { SafetensorsWeights s(p); });
  };
  std::string msg = indexError({{"weight_map", {{"a", "missing.safetensors"}}}});
  EXPECT_NE(msg.find("missing.safetensors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
  msg = indexError({{"weight_map", {{"c", "m-00001-of-00002.safetensors"}}}});
  EXPECT_NE(msg.find("maps tensor 'c'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not contain it"), std::string::npos) << msg;
  msg = indexError({{"weight_map", {{"a", "../m-00001-of-00002.safetensors"}}}});
  EXPECT_NE(msg.find("not a file name in"), std::string::npos) << msg;
  msg = indexError({{"weight_map", {"a", "b"}}});
  EXPECT_NE(msg.find("weight_map"), std::string::npos) << msg;
  msg = indexError({{"metadata", {}}});
  EXPECT_NE(msg.find("field 'weight_map' is missing"), std::string::npos) << msg;
  std::string p = dir.write("broken.safetensors.index.json", "{\"weight_map\": {");
  msg = errorOf([&] { SafetensorsWeights s(p); });
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;
}

TEST(ComponentWeights, ChoosesPlainVariantOrIndex) {
  TempDir dir;
  namespace fs = std::filesystem;
  const std::string unet = dir.file("unet");
  fs::create_directories(unet);
  auto touch = [&](const std::string& name) { std::ofstream(unet + "/" + name) << "x"; };

  // Nothing there.
  std::string msg = errorOf([&] { findComponentWeights(unet, "diffusion_pytorch_model", ""); });
  EXPECT_NE(msg.find("no weights in '" + unet + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("diffusion_pytorch_model.safetensors"), std::string::npos) << msg;
  // Only a pickle: refused with the conversion advice.
  touch("diffusion_pytorch_model.bin");
  msg = errorOf([&] { findComponentWeights(unet, "diffusion_pytorch_model", ""); });
  EXPECT_NE(msg.find("pickle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("diffusion_pytorch_model.bin"), std::string::npos) << msg;
  // The fp16 variant when it is all there is; the plain file first; an explicit variant only.
  touch("diffusion_pytorch_model.fp16.safetensors");
  EXPECT_EQ(findComponentWeights(unet, "diffusion_pytorch_model", ""), unet + "/diffusion_pytorch_model.fp16.safetensors");
  touch("diffusion_pytorch_model.safetensors.index.json");
  EXPECT_EQ(findComponentWeights(unet, "diffusion_pytorch_model", ""), unet + "/diffusion_pytorch_model.safetensors.index.json");
  touch("diffusion_pytorch_model.safetensors");
  EXPECT_EQ(findComponentWeights(unet, "diffusion_pytorch_model", ""), unet + "/diffusion_pytorch_model.safetensors");
  EXPECT_EQ(findComponentWeights(unet, "diffusion_pytorch_model", "fp16"), unet + "/diffusion_pytorch_model.fp16.safetensors");
  touch("diffusion_pytorch_model.safetensors.index.bf16.json");
  EXPECT_EQ(findComponentWeights(unet, "diffusion_pytorch_model", "bf16"),
            unet + "/diffusion_pytorch_model.safetensors.index.bf16.json");
  msg = errorOf([&] { findComponentWeights(unet, "diffusion_pytorch_model", "int8"); });
  EXPECT_NE(msg.find("diffusion_pytorch_model.int8.safetensors"), std::string::npos) << msg;
  // transformers' text encoder: model.safetensors, pickles as pytorch_model.bin.
  const std::string text = dir.file("text_encoder");
  fs::create_directories(text);
  std::ofstream(text + "/pytorch_model.bin") << "x";
  msg = errorOf([&] { findComponentWeights(text, "model", ""); });
  EXPECT_NE(msg.find("pytorch_model.bin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pickle"), std::string::npos) << msg;
}

TEST(ComponentWeights, DiffusersFolderWithVariantShardsAndOldVaeNames) {
  TempDir dir;
  test::SyntheticModel model = test::syntheticModel(false);
  const std::string folder = dir.file("sd");
  test::writeDiffusersFolder(model, folder);
  namespace fs = std::filesystem;

  // The UNet as an fp16 variant split over two shards.
  {
    auto values = test::expectedValues(model.unet);
    test::SafetensorsWriter first, second;
    json map = json::object();
    size_t i = 0;
    for (const test::SyntheticParam& p : model.unet) {
      bool inFirst = i++ % 2 == 0;
      (inFirst ? first : second).add(p.name, p.shape, values[p.name], "F16");
      map[p.name] = inFirst ? "diffusion_pytorch_model.fp16-00001-of-00002.safetensors"
                            : "diffusion_pytorch_model.fp16-00002-of-00002.safetensors";
    }
    first.write(folder + "/unet/diffusion_pytorch_model.fp16-00001-of-00002.safetensors");
    second.write(folder + "/unet/diffusion_pytorch_model.fp16-00002-of-00002.safetensors");
    std::ofstream(folder + "/unet/diffusion_pytorch_model.safetensors.index.fp16.json") << json{{"weight_map", map}}.dump();
    fs::remove(folder + "/unet/diffusion_pytorch_model.safetensors");
  }
  // The VAE with the attention names of older diffusers releases (query/key/value/proj_attn).
  {
    test::SafetensorsWriter w;
    for (const auto& [name, values] : test::expectedValues(model.vae)) {
      std::string stored = name;
      for (auto [now, old] : {std::pair<std::string, std::string>{".to_q.", ".query."},
                              {".to_k.", ".key."},
                              {".to_v.", ".value."},
                              {".to_out.0.", ".proj_attn."}})
        if (size_t at = stored.find(now); at != std::string::npos) stored = stored.replace(at, now.size(), old);
      const test::SyntheticParam* p = nullptr;
      for (const auto& q : model.vae)
        if (q.name == name) p = &q;
      w.add(stored, p->shape, values);
    }
    w.write(folder + "/vae/diffusion_pytorch_model.safetensors");
  }
  ModelFiles m = openModel(folder);
  for (const auto& [name, values] : test::expectedValues(model.unet))
    ASSERT_EQ(m.unetWeights->read(name, m.unetWeights->shape(name)), values) << name;
  for (const auto& [name, values] : test::expectedValues(model.vae))
    ASSERT_EQ(m.vaeWeights->read(name, m.vaeWeights->shape(name)), values) << name;
  EXPECT_EQ(m.vaeWeights->names().size(), model.vae.size());
  EXPECT_NE(m.unetWeights->describe().find("2 shards"), std::string::npos);
  // Asking for a variant that is not there.
  OpenOptions options;
  options.variant = "fp16";
  std::string msg = errorOf([&] { openModel(folder, options); });
  EXPECT_NE(msg.find("no weights in '" + folder + "/text_encoder'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace sdgen::models
