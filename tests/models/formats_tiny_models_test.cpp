// The tiny real models of tests/data (written by tests/reference/make_fixtures.py with diffusers/transformers): the
// diffusers folders and the same weights as LDM single files (checked there against diffusers' own single-file
// converters). Every diffusers tensor name must read identically from both layouts, and the architecture inferred
// from the single file's shapes must equal the folder's configs.
#include <gtest/gtest.h>

#include <filesystem>

#include "models/formats/ldm_checkpoint.h"
#include "models/formats/model_files.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/test_support.h"

namespace sdgen::models {
namespace {

struct TinyModel {
  const char* folder;
  const char* single;
  bool sd2;
};
void PrintTo(const TinyModel& m, std::ostream* os) { *os << m.folder; }

class TinyModels : public ::testing::TestWithParam<TinyModel> {
 protected:
  std::string folder() const { return test::sourcePath(std::string("tests/data/") + GetParam().folder); }
  std::string single() const { return test::sourcePath(std::string("tests/data/") + GetParam().single); }
  void SetUp() override {
    // The fixtures are part of the repository; their absence is a failure, not a reason to skip.
    ASSERT_TRUE(std::filesystem::is_directory(folder())) << folder() << " is missing (tests/reference/make_fixtures.py)";
    ASSERT_TRUE(std::filesystem::is_regular_file(single())) << single() << " is missing";
  }
};

TEST_P(TinyModels, SingleFileWithConfigFolderEqualsDiffusersFolder) {
  ModelFiles diffusers = openModel(folder());
  OpenOptions options;
  options.configPath = folder();
  ModelFiles ldm = openModel(single(), options);
  EXPECT_EQ(ldm.architecture, GetParam().sd2 ? "SD 2.x" : "SD 1.x");
  test::expectSameWeights(*diffusers.textEncoderWeights, *ldm.textEncoderWeights);
  test::expectSameWeights(*diffusers.unetWeights, *ldm.unetWeights);
  test::expectSameWeights(*diffusers.vaeWeights, *ldm.vaeWeights);
  test::expectSameConfig(diffusers.textEncoderConfig, ldm.textEncoderConfig);
  test::expectSameConfig(diffusers.unetConfig, ldm.unetConfig);
  test::expectSameConfig(diffusers.vaeConfig, ldm.vaeConfig);
  test::expectSameConfig(diffusers.scheduler, ldm.scheduler);
  // Both tokenizers come from the folder: the same ids, padded alike (SD 1.x: end-of-text, SD 2.x: "!" = 0).
  Encoding a = diffusers.tokenizer->encode("a red circle on a blue background");
  Encoding b = ldm.tokenizer->encode("a red circle on a blue background");
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.ids.back(), GetParam().sd2 ? 0 : 49407);
  EXPECT_EQ(diffusers.textEncoderConfig.padTokenId, GetParam().sd2 ? 0 : 49407);
}

TEST_P(TinyModels, ShapesGiveTheFolderArchitecture) {
  // Without configs: what the shapes show must equal the folder's configs field by field.
  ModelFiles diffusers = openModel(folder());
  LdmCheckpoint c = openLdmCheckpoint(single(), diffusers.vaeConfig.sampleSize);
  EXPECT_EQ(c.family, GetParam().sd2 ? LdmFamily::SD2 : LdmFamily::SD1);
  const UNetConfig& u = c.unetConfig;
  const UNetConfig& du = diffusers.unetConfig;
  EXPECT_EQ(u.inChannels, du.inChannels);
  EXPECT_EQ(u.outChannels, du.outChannels);
  EXPECT_EQ(u.blockOutChannels, du.blockOutChannels);
  EXPECT_EQ(u.downBlockTypes, du.downBlockTypes);
  EXPECT_EQ(u.upBlockTypes, du.upBlockTypes);
  EXPECT_EQ(u.midBlockType, du.midBlockType);
  EXPECT_EQ(u.layersPerBlock, du.layersPerBlock);
  EXPECT_EQ(u.transformerLayersPerBlock, du.transformerLayersPerBlock);
  EXPECT_EQ(u.crossAttentionDim, du.crossAttentionDim);
  EXPECT_EQ(u.useLinearProjection, du.useLinearProjection);
  EXPECT_EQ(u.convInKernel, du.convInKernel);
  EXPECT_EQ(u.convOutKernel, du.convOutKernel);
  EXPECT_EQ(u.sampleSize, du.sampleSize);  // the image size given above over the VAE's scale factor
  EXPECT_EQ(u.upcastAttention, du.upcastAttention);
  EXPECT_EQ(u.normNumGroups, du.normNumGroups);
  test::expectSameConfig(diffusers.vaeConfig, c.vaeConfig);
  const ClipTextConfig& t = c.textEncoderConfig;
  const ClipTextConfig& dt = diffusers.textEncoderConfig;
  EXPECT_EQ(t.vocabSize, dt.vocabSize);
  EXPECT_EQ(t.hiddenSize, dt.hiddenSize);
  EXPECT_EQ(t.intermediateSize, dt.intermediateSize);
  EXPECT_EQ(t.numHiddenLayers, dt.numHiddenLayers);  // SD 2.x: the OpenCLIP resblocks minus the last
  EXPECT_EQ(t.maxPositionEmbeddings, dt.maxPositionEmbeddings);
  EXPECT_EQ(t.hiddenAct, dt.hiddenAct);
  EXPECT_EQ(t.layerNormEps, dt.layerNormEps);
  EXPECT_EQ(t.padTokenId, dt.padTokenId);
  // Heads are not in the weights. These models' widths (32) are no multiple of the 64-channel heads of real
  // CLIP/OpenCLIP (and SD 2.x UNets), so the conventions leave them undetermined and openModel asks for the folder.
  EXPECT_EQ(t.numAttentionHeads, 0);
  EXPECT_FALSE(c.undetermined.empty());
  test::expectErrorContaining([&] { openModel(single()); }, "the weights do not determine");
  test::expectErrorContaining([&] { openModel(single()); }, "the text encoder's num_attention_heads (width 32");
  if (!GetParam().sd2) {
    EXPECT_EQ(u.attentionHeads, std::vector<int>(u.blockOutChannels.size(), 8));  // SD 1.x: 8
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TinyModels,
                         ::testing::Values(TinyModel{"tiny-sd1", "tiny-sd1-ldm.safetensors", false},
                                           TinyModel{"tiny-sd2", "tiny-sd2-ldm.safetensors", true}),
                         [](const auto& info) { return info.param.sd2 ? "Sd2" : "Sd1"; });

}  // namespace
}  // namespace sdgen::models
