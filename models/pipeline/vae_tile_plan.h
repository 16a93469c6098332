#pragma once
// The arithmetic of diffusers' AutoencoderKL tiling (enable_tiling: tiled_decode and _tiled_encode), host only:
// where the tiles start, how far they overlap, and how their outputs are blended and cropped into one image
// (or one latent map). docs/vae-tiling.md.
//
// diffusers (0.42.1): tile_sample_min_size = config sample_size (pixels), tile_latent_min_size =
// int(sample_size / 2^(levels - 1)), tile_overlap_factor = 0.25. Decode: latent tiles of tile_latent_min_size
// every int(tile_latent_min_size * 0.75) latents; each decoded tile is blended with the (already blended) tile
// above over blend_extent = int(tile_sample_min_size * 0.25) rows, then with the tile to its left over as many
// columns, linearly (blend_v, blend_h), and cropped to row_limit = tile_sample_min_size - blend_extent rows and
// columns; the crops are concatenated. Encode: the same with pixels and latents swapped. Tiles at the bottom and
// right edges are whatever is left of the input (smaller), and a blend never spans more than either tile.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/error.h"

namespace sdgen::pipeline {

// --vae-tiling (On: diffusers' use_tiling), --no-vae-tiling (Off); Auto tiles when the full-size decode would not
// fit (autoTilingLimit in vae_tiling.h).
enum class VaeTilingMode { Auto, On, Off };

// One tiled pass over an input of height x width.
struct TilePlan {
  int64_t tile = 0;    // tile side in the input (latents when decoding, pixels when encoding)
  int64_t stride = 0;  // overlap_size: distance between tile starts in the input
  int64_t blend = 0;   // blend_extent, in the output
  int64_t keep = 0;    // row_limit: rows and columns of each blended tile kept, in the output
  std::vector<int64_t> rowStarts, colStarts;

  // Rows (columns) of tile i of an input of `extent` rows (columns) starting at `start`.
  int64_t extentAt(int64_t start, int64_t extent) const { return std::min(tile, extent - start); }
};

struct VaeTileGeometry {
  int64_t sampleTile = 0;  // tile_sample_min_size
  int64_t latentTile = 0;  // tile_latent_min_size
  static constexpr double kOverlapFactor = 0.25;  // tile_overlap_factor

  // sampleSize: the VAE config's sample_size; levels: len(block_out_channels).
  static VaeTileGeometry of(int sampleSize, int levels) {
    if (sampleSize <= 0 || levels <= 0) throw Error("VAE tiling needs a positive sample_size, got " + std::to_string(sampleSize));
    VaeTileGeometry g{sampleSize, int64_t(double(sampleSize) / double(int64_t(1) << (levels - 1)))};
    if (g.latentTile < 1) throw Error("VAE tiling: sample_size " + std::to_string(sampleSize) + " is smaller than one latent");
    return g;
  }

  // diffusers' _decode / _encode switch to tiling (with use_tiling) when either side is larger than one tile.
  bool decodeTiles(int64_t latentH, int64_t latentW) const { return latentH > latentTile || latentW > latentTile; }
  bool encodeTiles(int64_t pixelH, int64_t pixelW) const { return pixelH > sampleTile || pixelW > sampleTile; }

  TilePlan decodePlan(int64_t latentH, int64_t latentW) const {
    return plan(latentTile, sampleTile, latentH, latentW);
  }
  TilePlan encodePlan(int64_t pixelH, int64_t pixelW) const { return plan(sampleTile, latentTile, pixelH, pixelW); }

 private:
  static TilePlan plan(int64_t inTile, int64_t outTile, int64_t h, int64_t w) {
    TilePlan p;
    p.tile = inTile;
    p.stride = int64_t(double(inTile) * (1 - kOverlapFactor));
    p.blend = int64_t(double(outTile) * kOverlapFactor);
    p.keep = outTile - p.blend;
    if (p.stride < 1 || p.keep < 1) throw Error("VAE tiling: tiles of " + std::to_string(inTile) + " are too small to overlap");
    for (int64_t i = 0; i < h; i += p.stride) p.rowStarts.push_back(i);
    for (int64_t j = 0; j < w; j += p.stride) p.colStarts.push_back(j);
    return p;
  }
};

// A tile's output on the host: [h, w, channels] row-major (NHWC without the batch).
template <typename T>
struct HostTile {
  int64_t h = 0, w = 0;
  std::vector<T> values;
};

// diffusers' blend_v: the first min(a.h, b.h, extent) rows of b fade in from the last rows of a (same width).
template <typename T>
void blendVertical(const HostTile<T>& a, HostTile<T>& b, int64_t extent, int64_t channels) {
  const int64_t e = std::min({a.h, b.h, extent}), row = b.w * channels;
  for (int64_t y = 0; y < e; ++y) {
    const T wb = T(double(y) / double(e)), wa = T(1.0 - double(y) / double(e));
    const T* src = a.values.data() + (a.h - e + y) * row;
    T* dst = b.values.data() + y * row;
    for (int64_t i = 0; i < row; ++i) dst[i] = src[i] * wa + dst[i] * wb;
  }
}

// diffusers' blend_h: the first min(a.w, b.w, extent) columns of b fade in from the last columns of a (same height).
template <typename T>
void blendHorizontal(const HostTile<T>& a, HostTile<T>& b, int64_t extent, int64_t channels) {
  const int64_t e = std::min({a.w, b.w, extent});
  for (int64_t y = 0; y < b.h; ++y)
    for (int64_t x = 0; x < e; ++x) {
      const T wb = T(double(x) / double(e)), wa = T(1.0 - double(x) / double(e));
      const T* src = a.values.data() + (y * a.w + a.w - e + x) * channels;
      T* dst = b.values.data() + (y * b.w + x) * channels;
      for (int64_t c = 0; c < channels; ++c) dst[c] = src[c] * wa + dst[c] * wb;
    }
}

// Blends and crops the tiles of a plan into one [height, width, channels] output, fed in diffusers' order (row
// by row, left to right) as they are computed: each tile is blended with the tile above and the tile to its left
// as those were after their own blends, which is all diffusers' in-place loop reads, so only the previous row
// of tiles is kept.
template <typename T>
class TileAssembler {
 public:
  TileAssembler(const TilePlan& plan, int64_t height, int64_t width, int64_t channels)
      : plan_(plan), height_(height), width_(width), channels_(channels), out_(size_t(height * width * channels)) {}

  void add(size_t row, size_t col, HostTile<T> tile) {
    if (row != nextRow_ || col != nextCol_)
      throw Error("VAE tiling: tile (" + std::to_string(row) + ", " + std::to_string(col) + ") out of order");
    if (++nextCol_ == plan_.colStarts.size()) nextCol_ = 0, ++nextRow_;
    if (col == 0 && row > 0) {  // a new row of tiles
      top_ += rowHeight_;
      above_ = std::move(current_);
      current_.clear();
    }
    if (tile.values.size() != size_t(tile.h * tile.w * channels_)) throw Error("VAE tiling: a tile has the wrong size");
    if (row > 0) blendVertical(above_.at(col), tile, plan_.blend, channels_);
    if (col > 0) blendHorizontal(current_[col - 1], tile, plan_.blend, channels_);
    const int64_t h = std::min(plan_.keep, tile.h), w = std::min(plan_.keep, tile.w);
    const int64_t left = col == 0 ? 0 : left_;
    if (top_ + h > height_ || left + w > width_) throw sizeError(top_ + h, left + w);
    for (int64_t y = 0; y < h; ++y)
      std::copy_n(tile.values.data() + y * tile.w * channels_, w * channels_,
                  out_.data() + ((top_ + y) * width_ + left) * channels_);
    left_ = left + w;
    rowHeight_ = h;
    current_.push_back(std::move(tile));
  }

  // The assembled output; throws unless the crops covered exactly height x width.
  std::vector<T> take() {
    if (top_ + rowHeight_ != height_ || left_ != width_) throw sizeError(top_ + rowHeight_, left_);
    return std::move(out_);
  }

 private:
  Error sizeError(int64_t h, int64_t w) const {
    return Error("VAE tiling: the tiles' crops come to " + std::to_string(w) + "x" + std::to_string(h) +
                 ", not the " + std::to_string(width_) + "x" + std::to_string(height_) +
                 " expected (the VAE config's sample_size gives tiles that do not line up)");
  }

  TilePlan plan_;
  int64_t height_, width_, channels_;
  std::vector<T> out_;
  std::vector<HostTile<T>> above_, current_;
  size_t nextRow_ = 0, nextCol_ = 0;
  int64_t top_ = 0, left_ = 0, rowHeight_ = 0;
};

}  // namespace sdgen::pipeline
