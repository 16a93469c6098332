#pragma once
// The conv weights a network loads, in load order, for --profile-conv: a WeightSource that forwards every call to
// the model's source and remembers each [Cout, Cin, k, k] kernel read with k > 1 (1x1 kernels are read as linear
// products by nn::ParameterStore). The network builders add conv layers in the order they loaded their weights,
// which is how a conv node of the graph finds its input channels and kernel size (profile_conv.cpp checks the
// counts and output channels agree).
#include <string>
#include <vector>

#include "models/weight_source.h"

namespace sdgen::app {

struct RecordedConvWeight {
  std::string name;
  int cout = 0, cin = 0, k = 0;
};

class RecordingWeightSource : public models::WeightSource {
 public:
  explicit RecordingWeightSource(const models::WeightSource& inner) : inner_(inner) {}

  std::string describe() const override { return inner_.describe(); }
  bool contains(std::string_view name) const override { return inner_.contains(name); }
  std::vector<int64_t> shape(std::string_view name) const override { return inner_.shape(name); }
  std::vector<std::string> names() const override { return inner_.names(); }
  std::vector<float> read(std::string_view name, std::span<const int64_t> expected) const override;
  // nn::ParameterStore reads conv kernels through raw() (packed on the device): recorded there too.
  std::optional<models::RawWeight> raw(std::string_view name, std::span<const int64_t> expected) const override;

  const std::vector<RecordedConvWeight>& convWeights() const { return convs_; }

 private:
  void record(std::string_view name, std::span<const int64_t> expected) const;
  const models::WeightSource& inner_;
  mutable std::vector<RecordedConvWeight> convs_;  // read() is const in the interface
};

}  // namespace sdgen::app
