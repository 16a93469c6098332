#pragma once
// SDXL's micro-conditioning as the GUI edits it: each of original size, crop and target size either unset
// (diffusers' default: the output size, (0, 0)) or set to a value; the unconditional half's sizes (diffusers'
// negative_original_size, negative_target_size) set together or not at all, as diffusers uses them only in
// pairs, with an optional negative crop. Converts to and from the request's form.
#include <array>

#include "models/pipeline/micro_conditioning.h"

namespace sdgen::app {

struct MicroConditioningFields {
  bool setOriginal = false, setCrop = false, setTarget = false;
  std::array<int, 2> originalSize{1024, 1024};  // width, height
  std::array<int, 2> cropTopLeft{0, 0};          // x, y
  std::array<int, 2> targetSize{1024, 1024};    // width, height
  bool setNegative = false, setNegativeCrop = false;  // the negative crop counts only with the negative sizes
  std::array<int, 2> negativeOriginalSize{512, 512};   // width, height
  std::array<int, 2> negativeCropTopLeft{0, 0};        // x, y
  std::array<int, 2> negativeTargetSize{1024, 1024};  // width, height

  // The request's micro-conditioning (only the fields that are set).
  pipeline::SdxlMicroConditioning toRequest() const;
  // A request's (or a PNG's parameters') micro-conditioning as fields; an unset value keeps its default. Negative
  // values that diffusers would not use (one size without the other, a crop without both) are dropped.
  static MicroConditioningFields from(const pipeline::SdxlMicroConditioning& m);
  // Sizes from 1 and crops from 0 to `maxSize` (the command line's bound), so no typed value leaves them.
  void clamp(int maxSize);
};

}  // namespace sdgen::app
