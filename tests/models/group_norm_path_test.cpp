// nn::chooseGroupNormPath, the rule by which the UNet's and the VAE's group norms pick a kernel on tensor-core
// devices in fp16 (docs/dispatch.md), on SD 1.5's shapes at 512² and SDXL's at 1024², and its knobs. No device.
#include <gtest/gtest.h>

#include "models/nn/layers.h"

namespace sdgen::nn {
namespace {

GroupNormPath pathOf(const graph::Shape& s, const GroupNormKnobs& knobs = {}) {
  return chooseGroupNormPath(s, 32, knobs);
}

TEST(GroupNormPathRule, TilesWhereTheOneLaunchKernelIsSlow) {
  // The UNet's 64² level: groups of 10 channels (not whole 4-channel columns) and the up blocks' 640- and
  // 960-channel concatenations past the one-launch bound.
  EXPECT_EQ(pathOf({2, 64, 64, 320}), GroupNormPath::Tiles);
  EXPECT_EQ(pathOf({2, 64, 64, 640}), GroupNormPath::Tiles);
  EXPECT_EQ(pathOf({2, 64, 64, 960}), GroupNormPath::Tiles);
  EXPECT_EQ(pathOf({2, 32, 32, 960}), GroupNormPath::Tiles);  // groups of 30 channels
  // Whole columns within the bound: one launch (8²-32², and the VAE's 64² level).
  EXPECT_EQ(pathOf({2, 32, 32, 640}), GroupNormPath::Rows);
  EXPECT_EQ(pathOf({2, 32, 32, 1280}), GroupNormPath::Rows);
  EXPECT_EQ(pathOf({2, 32, 32, 1920}), GroupNormPath::Rows);
  EXPECT_EQ(pathOf({2, 16, 16, 2560}), GroupNormPath::Rows);
  EXPECT_EQ(pathOf({2, 8, 8, 1280}), GroupNormPath::Rows);
  EXPECT_EQ(pathOf({1, 64, 64, 512}), GroupNormPath::Rows);
  // The VAE past the bound: the tiles at 128², the statistics path from 256² (kGroupNormTilesMaxPixels).
  EXPECT_EQ(pathOf({1, 128, 128, 512}), GroupNormPath::Tiles);
  EXPECT_EQ(pathOf({1, 256, 256, 512}), GroupNormPath::Lazy);
  EXPECT_EQ(pathOf({1, 512, 512, 128}), GroupNormPath::Lazy);
  // SDXL at 1024²: its 128² latent's 320-channel norms are at the tiles' pixel limit.
  EXPECT_EQ(pathOf({2, 128, 128, 320}), GroupNormPath::Tiles);
  EXPECT_EQ(pathOf({2, 129, 128, 320}), GroupNormPath::Lazy);  // one pixel row more, and past the rows' bound
  // What the rule does not take: not NHWC, channels not divisible by the groups.
  EXPECT_EQ(pathOf({2, 4096, 320}), GroupNormPath::Lazy);
  EXPECT_EQ(pathOf({2, 64, 64, 330}), GroupNormPath::Lazy);
}

TEST(GroupNormPathRule, KnobsForMeasurements) {
  GroupNormKnobs rows;
  rows.choice = "rows";  // the rule before session 26
  EXPECT_EQ(pathOf({2, 64, 64, 320}, rows), GroupNormPath::Rows);
  EXPECT_EQ(pathOf({2, 64, 64, 640}, rows), GroupNormPath::Lazy);
  GroupNormKnobs tiles;
  tiles.choice = "tiles";  // session 26's rule: the tiles wherever they fit
  EXPECT_EQ(pathOf({2, 8, 8, 1280}, tiles), GroupNormPath::Tiles);
  EXPECT_EQ(pathOf({1, 512, 512, 128}, tiles), GroupNormPath::Tiles);
  GroupNormKnobs lazy;
  lazy.choice = "lazy";
  EXPECT_EQ(pathOf({2, 64, 64, 320}, lazy), GroupNormPath::Lazy);
  GroupNormKnobs min;
  min.tilesMinElements = 40961;  // the 64² level's groups hold 40960 elements
  EXPECT_EQ(pathOf({2, 64, 64, 320}, min), GroupNormPath::Rows);
  GroupNormKnobs max;
  max.rowsMaxElements = 0;  // no one-launch kernel: the tiles within their pixel limit, else statistics
  EXPECT_EQ(pathOf({2, 32, 32, 640}, max), GroupNormPath::Tiles);
  EXPECT_EQ(pathOf({1, 256, 256, 512}, max), GroupNormPath::Lazy);
}

}  // namespace
}  // namespace sdgen::nn
