#include "app/profile_conv_weights.h"

namespace sdgen::app {

void RecordingWeightSource::record(std::string_view name, std::span<const int64_t> expected) const {
  if (expected.size() == 4 && expected[2] == expected[3] && expected[2] > 1)
    convs_.push_back({std::string(name), int(expected[0]), int(expected[1]), int(expected[2])});
}

std::vector<float> RecordingWeightSource::read(std::string_view name, std::span<const int64_t> expected) const {
  std::vector<float> values = inner_.read(name, expected);
  record(name, expected);
  return values;
}

std::optional<models::RawWeight> RecordingWeightSource::raw(std::string_view name,
                                                            std::span<const int64_t> expected) const {
  std::optional<models::RawWeight> r = inner_.raw(name, expected);
  if (r) record(name, expected);
  return r;
}

}  // namespace sdgen::app
