// TAESD files (models/formats/taesd_files.h) without the device: madebyollin's nn.Sequential layout and diffusers'
// names, written here from the original taesd.py module order (independently of the loader), the config inferred
// from the shapes, every tensor mapped to its diffusers name with its own values, and bad files refused with
// messages naming the file and the tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "models/formats/taesd_files.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using test::TempDir;

constexpr int kChannels = 4, kLatent = 4;

// One module of madebyollin's Sequential: its index and whether it is a conv (with or without bias) or a Block.
struct Module {
  int index;
  enum Kind { Conv, ConvNoBias, Block } kind;
  int cin, cout;
};

// madebyollin's taesd.py: Decoder = Clamp, conv(lc, C), ReLU, then per stage Blocks and (but the last)
// Upsample + conv(C, C, bias=False), the last stage ending in conv(C, 3). Encoder = conv(3, C), Blocks, then per
// further stage conv(C, C, stride 2, bias=False) + Blocks, and conv(C, lc).
std::vector<Module> madebyollinModules(const std::string& half, const std::vector<int>& blocks) {
  std::vector<Module> m;
  int k = 0;
  if (half == "decoder") {
    k = 1;  // 0: Clamp
    m.push_back({k++, Module::Conv, kLatent, kChannels});
    ++k;  // ReLU
    for (size_t s = 0; s < blocks.size(); ++s) {
      for (int b = 0; b < blocks[s]; ++b) m.push_back({k++, Module::Block, kChannels, kChannels});
      if (s + 1 < blocks.size()) {
        ++k;  // Upsample
        m.push_back({k++, Module::ConvNoBias, kChannels, kChannels});
      }
    }
    m.push_back({k, Module::Conv, kChannels, 3});
  } else {
    for (size_t s = 0; s < blocks.size(); ++s) {
      m.push_back(s == 0 ? Module{k++, Module::Conv, 3, kChannels} : Module{k++, Module::ConvNoBias, kChannels, kChannels});
      for (int b = 0; b < blocks[s]; ++b) m.push_back({k++, Module::Block, kChannels, kChannels});
    }
    m.push_back({k, Module::Conv, kChannels, kLatent});
  }
  return m;
}

void addConv(test::SafetensorsWriter& w, const std::string& p, int cin, int cout, bool bias, const std::string& skip) {
  if (p + "weight" != skip) w.add(p + "weight", {cout, cin, 3, 3}, test::patternValues(p + "weight", size_t(cout) * cin * 9));
  if (bias && p + "bias" != skip) w.add(p + "bias", {cout}, test::patternValues(p + "bias", size_t(cout)));
}

// Writes one half; `prefix` "" for madebyollin ("K.*"), else diffusers' "decoder.layers." with the decoder's
// indices one lower. `skip`: a tensor name (as stored) to leave out.
void writeHalf(test::SafetensorsWriter& w, const std::string& half, const std::vector<int>& blocks,
               bool diffusersNames, const std::string& skip = "") {
  for (const Module& m : madebyollinModules(half, blocks)) {
    const int index = diffusersNames && half == "decoder" ? m.index - 1 : m.index;
    const std::string p = (diffusersNames ? half + ".layers." : std::string()) + std::to_string(index) + ".";
    if (m.kind == Module::Block)
      for (int c : {0, 2, 4}) addConv(w, p + "conv." + std::to_string(c) + ".", m.cin, m.cout, true, skip);
    else
      addConv(w, p, m.cin, m.cout, m.kind == Module::Conv, skip);
  }
}

const std::vector<int> kDecoderBlocks{2, 1, 1}, kEncoderBlocks{1, 1, 2};

std::string madebyollinPair(const TempDir& dir, const std::string& stem = "taesd") {
  test::SafetensorsWriter dec, enc;
  writeHalf(dec, "decoder", kDecoderBlocks, false);
  writeHalf(enc, "encoder", kEncoderBlocks, false);
  enc.write(dir.file(stem + "_encoder.safetensors"));
  const std::string path = dir.file(stem + "_decoder.safetensors");
  dec.write(path);
  return path;
}

TEST(TaesdFiles, MadebyollinFilesMapToDiffusersNamesAndInferTheConfig) {
  TempDir dir;
  const models::TaesdFiles t = models::openTaesd(madebyollinPair(dir));
  EXPECT_EQ(t.layout, "madebyollin files");
  ASSERT_TRUE(t.decoderWeights && t.encoderWeights) << "the encoder beside the decoder is found";
  EXPECT_EQ(t.config.numDecoderBlocks, kDecoderBlocks);
  EXPECT_EQ(t.config.numEncoderBlocks, kEncoderBlocks);
  EXPECT_EQ(t.config.decoderBlockOutChannels, std::vector<int>(3, kChannels));
  EXPECT_EQ(t.config.latentChannels, kLatent);
  EXPECT_EQ(t.config.upscale(), 4);
  EXPECT_EQ(t.variant, models::TaesdVariant::Taesd);
  // The decoder's "K.*" is diffusers' "decoder.layers.(K-1).*" with the values stored under "K.*".
  EXPECT_EQ(t.decoderWeights->read("decoder.layers.0.weight", {kChannels, kLatent, 3, 3}),
            test::patternValues("1.weight", kChannels * kLatent * 9));
  EXPECT_EQ(t.decoderWeights->read("decoder.layers.2.conv.4.bias", {kChannels}), test::patternValues("3.conv.4.bias", kChannels));
  EXPECT_FALSE(t.decoderWeights->contains("decoder.layers.4.weight")) << "index 4 is the Upsample";
  EXPECT_EQ(t.encoderWeights->read("encoder.layers.2.weight", {kChannels, kChannels, 3, 3}),
            test::patternValues("2.weight", kChannels * kChannels * 9));
  // The loader's own name list agrees with the Sequential written here.
  EXPECT_EQ(models::taesdTensorNames(t.config, "decoder"), t.decoderWeights->names());
  EXPECT_EQ(models::taesdTensorNames(t.config, "encoder"), t.encoderWeights->names());
  // The folder holding the pair opens the same.
  const models::TaesdFiles folder = models::openTaesd(dir.file(""));
  EXPECT_EQ(folder.config.numDecoderBlocks, kDecoderBlocks);
  EXPECT_TRUE(folder.encoderWeights);
}

TEST(TaesdFiles, RealTaesdTopologyNames) {
  const models::TaesdConfig c;  // AutoencoderTiny's defaults: 4 stages, (3,3,3,1) / (1,3,3,3)
  const std::vector<std::string> dec = models::taesdTensorNames(c, "decoder"), enc = models::taesdTensorNames(c, "encoder");
  EXPECT_EQ(dec.size(), 2 + 10 * 6 + 3 + 2u);
  EXPECT_EQ(enc.size(), 2 + 10 * 6 + 3 + 2u);
  for (const char* n : {"decoder.layers.18.bias", "decoder.layers.16.weight", "decoder.layers.17.conv.4.weight"})
    EXPECT_TRUE(std::binary_search(dec.begin(), dec.end(), n)) << n;
  for (const char* n : {"decoder.layers.5.weight", "decoder.layers.16.bias", "decoder.layers.1.weight"})
    EXPECT_FALSE(std::binary_search(dec.begin(), dec.end(), n)) << n;
  for (const char* n : {"encoder.layers.0.bias", "encoder.layers.2.weight", "encoder.layers.14.bias"})
    EXPECT_TRUE(std::binary_search(enc.begin(), enc.end(), n)) << n;
  EXPECT_FALSE(std::binary_search(enc.begin(), enc.end(), std::string("encoder.layers.2.bias")));
}

TEST(TaesdFiles, DiffusersSingleFileInfersBothHalves) {
  TempDir dir;
  test::SafetensorsWriter w;
  writeHalf(w, "decoder", kDecoderBlocks, true);
  writeHalf(w, "encoder", kEncoderBlocks, true);
  const std::string path = dir.file("tiny_autoencoder.safetensors");
  w.write(path);
  const models::TaesdFiles t = models::openTaesd(path);
  EXPECT_EQ(t.layout, "diffusers file");
  EXPECT_EQ(t.config.numDecoderBlocks, kDecoderBlocks);
  EXPECT_EQ(t.config.numEncoderBlocks, kEncoderBlocks);
  EXPECT_EQ(t.variant, models::TaesdVariant::Unknown);
  EXPECT_NE(t.variantReason.find("names neither"), std::string::npos) << t.variantReason;
}

TEST(TaesdFiles, VariantFromTheName) {
  TempDir dir;
  EXPECT_EQ(models::openTaesd(madebyollinPair(dir, "taesdxl")).variant, models::TaesdVariant::TaesdXl);
}

TEST(TaesdFiles, UnknownMissingAndTruncatedTensorsAreErrorsNamingFileAndTensor) {
  TempDir dir;
  {
    test::SafetensorsWriter w;
    writeHalf(w, "decoder", kDecoderBlocks, false);
    w.add("3.conv.6.weight", {1}, {0.f});
    const std::string path = dir.file("extra_decoder.safetensors");
    w.write(path);
    const std::string msg = test::errorOf([&] { models::openTaesd(path); });
    EXPECT_NE(msg.find("decoder.layers.2.conv.6.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  {
    test::SafetensorsWriter w;
    writeHalf(w, "decoder", kDecoderBlocks, false, "3.conv.2.bias");
    const std::string path = dir.file("missing_decoder.safetensors");
    w.write(path);
    const std::string msg = test::errorOf([&] { models::openTaesd(path); });
    EXPECT_NE(msg.find("decoder.layers.2.conv.2.bias"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  {
    test::SafetensorsWriter w;
    writeHalf(w, "decoder", kDecoderBlocks, false);
    const std::string bytes = w.bytes();
    const std::string path = dir.write("cut_decoder.safetensors", bytes.substr(0, bytes.size() - 10));
    const std::string msg = test::errorOf([&] { models::openTaesd(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  {
    test::SafetensorsWriter w;
    w.add("model.diffusion_model.conv_in.weight", {1}, {0.f});
    const std::string path = dir.file("unet.safetensors");
    w.write(path);
    const std::string msg = test::errorOf([&] { models::openTaesd(path); });
    EXPECT_NE(msg.find("model.diffusion_model.conv_in.weight"), std::string::npos) << msg;
  }
}

TEST(TaesdFiles, FolderConfigIsCheckedAndNamedInErrors) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("vae"));
  std::ofstream(dir.file("vae/config.json")) << R"({"_class_name": "AutoencoderKL"})";
  test::SafetensorsWriter w;
  writeHalf(w, "decoder", kDecoderBlocks, true);
  w.write(dir.file("vae/diffusion_pytorch_model.safetensors"));
  const std::string msg = test::errorOf([&] { models::openTaesd(dir.file("vae")); });
  EXPECT_NE(msg.find("_class_name"), std::string::npos) << msg;
  EXPECT_NE(msg.find("config.json"), std::string::npos) << msg;
  test::expectErrorContaining([&] { models::openTaesd(dir.file("nothing_here")); }, "nothing_here");
}

}  // namespace
}  // namespace sdgen
