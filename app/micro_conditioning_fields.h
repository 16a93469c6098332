#pragma once
// SDXL's micro-conditioning as the GUI edits it: each of original size, crop and target size either unset
// (diffusers' default: the output size, (0, 0)) or set to a value; the negative half's values pass through
// unchanged (loaded from a PNG's parameters, not edited). Converts to and from the request's form.
#include <array>

#include "models/pipeline/micro_conditioning.h"

namespace sdgen::app {

struct MicroConditioningFields {
  bool setOriginal = false, setCrop = false, setTarget = false;
  std::array<int, 2> originalSize{1024, 1024};  // width, height
  std::array<int, 2> cropTopLeft{0, 0};          // x, y
  std::array<int, 2> targetSize{1024, 1024};    // width, height
  std::optional<std::pair<int, int>> negativeOriginalSize, negativeCropTopLeft, negativeTargetSize;

  // The request's micro-conditioning (only the fields that are set).
  pipeline::SdxlMicroConditioning toRequest() const;
  // A request's (or a PNG's parameters') micro-conditioning as fields; an unset value keeps its default.
  static MicroConditioningFields from(const pipeline::SdxlMicroConditioning& m);
  // Sizes from 1 and crops from 0 to `maxSize` (the command line's bound), so no typed value leaves them.
  void clamp(int maxSize);
};

}  // namespace sdgen::app
