#pragma once
// SDXL's micro-conditioning as a request gives it (sdgen --original-size, --crop, --target-size), in pixels:
// sizes as (width, height), the crop's top-left corner as (x, y). Unset: diffusers' defaults, the output size and
// (0, 0). docs/sdxl.md.
#include <array>
#include <optional>
#include <utility>
#include <vector>

namespace sdgen::pipeline {

struct SdxlMicroConditioning {
  std::optional<std::pair<int, int>> originalSize, cropTopLeft, targetSize;
  // The unconditional half's (diffusers' negative_original_size, negative_crops_coords_top_left,
  // negative_target_size): used when both sizes are given, else that half takes the ids above.
  std::optional<std::pair<int, int>> negativeOriginalSize, negativeCropTopLeft, negativeTargetSize;
  // The SDXL refiner's aesthetic scores (diffusers' aesthetic_score and negative_aesthetic_score, defaults 6.0 and
  // 2.5; ignored by other models).
  float aestheticScore = 6.0f, negativeAestheticScore = 2.5f;
  bool operator==(const SdxlMicroConditioning&) const = default;
};

// diffusers' add_time_ids for an output of width x height: (original height, width, crop top, left, target
// height, width); original_size and target_size default to (height, width), crops_coords_top_left to (0, 0).
std::array<float, 6> sdxlTimeIds(const SdxlMicroConditioning& m, int width, int height);

// The unconditional half's ids: from the negative sizes (and crop, default (0, 0)) when both sizes are given, as
// diffusers' negative_add_time_ids; else sdxlTimeIds. Only one of them, or a negative crop without them, is an
// error (diffusers would silently ignore it).
std::array<float, 6> sdxlNegativeTimeIds(const SdxlMicroConditioning& m, int width, int height);

// Both halves' add_time_ids: six values each for SDXL base, five for the refiner.
struct SdxlTimeIds {
  std::vector<float> positive, negative;
};
SdxlTimeIds sdxlTimeIdPair(const SdxlMicroConditioning& m, int width, int height);

// The refiner's (diffusers' _get_add_time_ids with requires_aesthetics_score): original_size +
// crops_coords_top_left + (aesthetic_score,), and for the unconditional half negative_original_size (default the
// original size) + negative_crops_coords_top_left (default (0, 0), not the crop) + (negative_aesthetic_score,).
// The target sizes are not part of it.
SdxlTimeIds sdxlRefinerTimeIdPair(const SdxlMicroConditioning& m, int width, int height);

}  // namespace sdgen::pipeline
