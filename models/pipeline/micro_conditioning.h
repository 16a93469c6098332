#pragma once
// SDXL's micro-conditioning as a request gives it (sdgen --original-size, --crop, --target-size), in pixels:
// sizes as (width, height), the crop's top-left corner as (x, y). Unset: diffusers' defaults, the output size and
// (0, 0). docs/sdxl.md.
#include <array>
#include <optional>
#include <utility>

namespace sdgen::pipeline {

struct SdxlMicroConditioning {
  std::optional<std::pair<int, int>> originalSize, cropTopLeft, targetSize;
  bool operator==(const SdxlMicroConditioning&) const = default;
};

// diffusers' add_time_ids for an output of width x height: (original height, width, crop top, left, target
// height, width); original_size and target_size default to (height, width), crops_coords_top_left to (0, 0).
std::array<float, 6> sdxlTimeIds(const SdxlMicroConditioning& m, int width, int height);

}  // namespace sdgen::pipeline
