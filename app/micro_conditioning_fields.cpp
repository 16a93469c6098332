#include "app/micro_conditioning_fields.h"

#include <algorithm>

namespace sdgen::app {

pipeline::SdxlMicroConditioning MicroConditioningFields::toRequest() const {
  pipeline::SdxlMicroConditioning m;
  if (setOriginal) m.originalSize = std::pair{originalSize[0], originalSize[1]};
  if (setCrop) m.cropTopLeft = std::pair{cropTopLeft[0], cropTopLeft[1]};
  if (setTarget) m.targetSize = std::pair{targetSize[0], targetSize[1]};
  if (setNegative) {
    m.negativeOriginalSize = std::pair{negativeOriginalSize[0], negativeOriginalSize[1]};
    m.negativeTargetSize = std::pair{negativeTargetSize[0], negativeTargetSize[1]};
    if (setNegativeCrop) m.negativeCropTopLeft = std::pair{negativeCropTopLeft[0], negativeCropTopLeft[1]};
  }
  return m;
}

MicroConditioningFields MicroConditioningFields::from(const pipeline::SdxlMicroConditioning& m) {
  MicroConditioningFields f;
  auto set = [](const std::optional<std::pair<int, int>>& value, bool& flag, std::array<int, 2>& field) {
    if (!value) return;
    flag = true;
    field = {value->first, value->second};
  };
  set(m.originalSize, f.setOriginal, f.originalSize);
  set(m.cropTopLeft, f.setCrop, f.cropTopLeft);
  set(m.targetSize, f.setTarget, f.targetSize);
  if (m.negativeOriginalSize && m.negativeTargetSize) {
    set(m.negativeOriginalSize, f.setNegative, f.negativeOriginalSize);
    set(m.negativeTargetSize, f.setNegative, f.negativeTargetSize);
    set(m.negativeCropTopLeft, f.setNegativeCrop, f.negativeCropTopLeft);
  }
  return f;
}

void MicroConditioningFields::clamp(int maxSize) {
  for (int& size : originalSize) size = std::clamp(size, 1, maxSize);
  for (int& size : targetSize) size = std::clamp(size, 1, maxSize);
  for (int& offset : cropTopLeft) offset = std::clamp(offset, 0, maxSize);
  for (int& size : negativeOriginalSize) size = std::clamp(size, 1, maxSize);
  for (int& size : negativeTargetSize) size = std::clamp(size, 1, maxSize);
  for (int& offset : negativeCropTopLeft) offset = std::clamp(offset, 0, maxSize);
}

}  // namespace sdgen::app
