// The arithmetic of diffusers' VAE tiling on the CPU in float64 (models/pipeline/vae_tile_plan.h), without the
// device: the tile geometry of the SD 1.5 and tiny VAEs, the linear blends written out by hand, and the streaming
// assembler against a direct transcription of diffusers' tiled_decode loop (every tile kept, blended in place).
#include <gtest/gtest.h>

#include <random>

#include "models/pipeline/vae_tile_plan.h"

namespace sdgen::pipeline {
namespace {

TEST(VaeTilePlan, Sd15GeometryIsDiffusers) {
  const VaeTileGeometry g = VaeTileGeometry::of(512, 4);  // sample_size 512, block_out_channels of 4 levels
  EXPECT_EQ(g.sampleTile, 512);
  EXPECT_EQ(g.latentTile, 64);
  EXPECT_FALSE(g.decodeTiles(64, 64));
  EXPECT_TRUE(g.decodeTiles(65, 64));
  EXPECT_TRUE(g.decodeTiles(64, 65));
  EXPECT_FALSE(g.encodeTiles(512, 512));
  EXPECT_TRUE(g.encodeTiles(512, 520));
  const TilePlan d = g.decodePlan(256, 256);  // 2048 x 2048
  EXPECT_EQ(d.stride, 48);
  EXPECT_EQ(d.blend, 128);
  EXPECT_EQ(d.keep, 384);
  EXPECT_EQ(d.rowStarts, (std::vector<int64_t>{0, 48, 96, 144, 192, 240}));
  EXPECT_EQ(d.extentAt(240, 256), 16);  // the last row of tiles is what is left
  const TilePlan e = g.encodePlan(2048, 1024);
  EXPECT_EQ(e.stride, 384);
  EXPECT_EQ(e.blend, 16);
  EXPECT_EQ(e.keep, 48);
  EXPECT_EQ(e.colStarts, (std::vector<int64_t>{0, 384, 768}));
}

TEST(VaeTilePlan, TinyGeometryIsDiffusers) {
  const VaeTileGeometry g = VaeTileGeometry::of(16, 2);  // tests/data/tiny-sd1/vae
  EXPECT_EQ(g.latentTile, 8);
  const TilePlan d = g.decodePlan(20, 13);
  EXPECT_EQ(d.stride, 6);
  EXPECT_EQ(d.blend, 4);
  EXPECT_EQ(d.keep, 12);
  EXPECT_EQ(d.rowStarts, (std::vector<int64_t>{0, 6, 12, 18}));
  EXPECT_EQ(d.colStarts, (std::vector<int64_t>{0, 6, 12}));
  const TilePlan e = g.encodePlan(40, 26);
  EXPECT_EQ(e.stride, 12);
  EXPECT_EQ(e.blend, 2);
  EXPECT_EQ(e.keep, 6);
}

HostTile<double> constant(int64_t h, int64_t w, int64_t c, double v) {
  return {h, w, std::vector<double>(size_t(h * w * c), v)};
}

TEST(VaeTileBlend, LinearRampsByHand) {
  // blend_h over 4 columns: b[x] = a[a.w - 4 + x] * (1 - x/4) + b[x] * x/4
  HostTile<double> a = constant(2, 6, 1, 10.0), b = constant(2, 5, 1, 2.0);
  for (int64_t y = 0; y < 2; ++y) a.values[size_t(y * 6 + 5)] = 30.0;  // a's last column
  blendHorizontal(a, b, 4, 1);
  const double row[5] = {10.0, 10.0 * 0.75 + 2.0 * 0.25, 10.0 * 0.5 + 2.0 * 0.5, 30.0 * 0.25 + 2.0 * 0.75, 2.0};
  for (int64_t y = 0; y < 2; ++y)
    for (int64_t x = 0; x < 5; ++x) EXPECT_DOUBLE_EQ(b.values[size_t(y * 5 + x)], row[x]) << y << "," << x;
  // blend_v with a tile shorter than the extent: the extent shrinks to it (min(a.h, b.h, extent)).
  HostTile<double> top = constant(6, 1, 2, 4.0), bottom = constant(2, 1, 2, 8.0);
  blendVertical(top, bottom, 4, 2);
  EXPECT_DOUBLE_EQ(bottom.values[0], 4.0);
  EXPECT_DOUBLE_EQ(bottom.values[1], 4.0);
  EXPECT_DOUBLE_EQ(bottom.values[2], 4.0 * 0.5 + 8.0 * 0.5);
}

// diffusers' tiled_decode after the decoder calls, transcribed: all tiles kept, blended in place in row-major
// order (blend_v with the tile above, then blend_h with the one to the left), cropped and concatenated.
std::vector<double> diffusersAssembly(std::vector<std::vector<HostTile<double>>> rows, const TilePlan& p, int64_t c,
                                      int64_t outH, int64_t outW) {
  std::vector<double> out(size_t(outH * outW * c), -1.0);
  int64_t top = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    int64_t left = 0, rowH = 0;
    for (size_t j = 0; j < rows[i].size(); ++j) {
      HostTile<double>& tile = rows[i][j];
      if (i > 0) blendVertical(rows[i - 1][j], tile, p.blend, c);
      if (j > 0) blendHorizontal(rows[i][j - 1], tile, p.blend, c);
      const int64_t h = std::min(p.keep, tile.h), w = std::min(p.keep, tile.w);
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w * c; ++x)
          out[size_t(((top + y) * outW + left) * c + x)] = tile.values[size_t(y * tile.w * c + x)];
      left += w;
      rowH = h;
    }
    EXPECT_EQ(left, outW);
    top += rowH;
  }
  EXPECT_EQ(top, outH);
  return out;
}

TEST(VaeTileBlend, AssemblerMatchesDiffusersLoop) {
  const VaeTileGeometry g = VaeTileGeometry::of(16, 2);
  const int64_t h = 20, w = 13, s = 2, c = 3;
  const TilePlan p = g.decodePlan(h, w);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<HostTile<double>>> rows;
  for (int64_t i : p.rowStarts) {
    rows.emplace_back();
    for (int64_t j : p.colStarts) {
      HostTile<double> t{p.extentAt(i, h) * s, p.extentAt(j, w) * s, {}};
      for (int64_t k = 0; k < t.h * t.w * c; ++k) t.values.push_back(u(rng));
      rows.back().push_back(std::move(t));
    }
  }
  const std::vector<double> want = diffusersAssembly(rows, p, c, h * s, w * s);
  TileAssembler<double> assembler(p, h * s, w * s, c);
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < rows[i].size(); ++j) assembler.add(i, j, rows[i][j]);
  const std::vector<double> got = assembler.take();
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], want[k]) << "value " << k;
}

TEST(VaeTileBlend, TilesOfOneFieldRebuildIt) {
  // Tiles cut from one smooth field agree where they overlap, so every blend gives the field back.
  const VaeTileGeometry g = VaeTileGeometry::of(16, 2);
  const int64_t h = 17, w = 30, s = 2;
  const TilePlan p = g.decodePlan(h, w);
  auto field = [](int64_t y, int64_t x) { return 0.25 * double(y) - 0.125 * double(x) + 1.0 / (1.0 + double(x * y)); };
  TileAssembler<double> assembler(p, h * s, w * s, 1);
  for (size_t i = 0; i < p.rowStarts.size(); ++i)
    for (size_t j = 0; j < p.colStarts.size(); ++j) {
      const int64_t top = p.rowStarts[i] * s, left = p.colStarts[j] * s;
      HostTile<double> t{p.extentAt(p.rowStarts[i], h) * s, p.extentAt(p.colStarts[j], w) * s, {}};
      for (int64_t y = 0; y < t.h; ++y)
        for (int64_t x = 0; x < t.w; ++x) t.values.push_back(field(top + y, left + x));
      assembler.add(i, j, std::move(t));
    }
  const std::vector<double> got = assembler.take();
  for (int64_t y = 0; y < h * s; ++y)
    for (int64_t x = 0; x < w * s; ++x) ASSERT_NEAR(got[size_t(y * w * s + x)], field(y, x), 1e-12) << y << "," << x;
}

TEST(VaeTileBlend, MisfitGeometryAndOrderAreErrors) {
  // sample_size 18 (9 latents): tiles every 6 latents (12 pixels) but 14 pixels kept: the crops overrun.
  const VaeTileGeometry g = VaeTileGeometry::of(18, 2);
  const TilePlan p = g.decodePlan(12, 6);  // one column; rows of 9 and 6 latents
  TileAssembler<double> a(p, 24, 12, 1);
  a.add(0, 0, constant(18, 12, 1, 0.0));
  EXPECT_THROW(a.add(1, 0, constant(12, 12, 1, 0.0)), Error);
  TileAssembler<double> b(g.decodePlan(12, 12), 24, 24, 1);
  EXPECT_THROW(b.add(0, 1, constant(18, 12, 1, 0.0)), Error);
}

}  // namespace
}  // namespace sdgen::pipeline
