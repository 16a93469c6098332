#pragma once
// Running one network of a tiny test model on the device against the diffusers/transformers fixtures
// (tests/data, written by tests/reference/make_fixtures.py): fixture tensors, NCHW <-> NHWC, error measures.
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "models/safetensors.h"

namespace sdgen::test {

std::string dataPath(const std::string& relative);  // tests/data/...

// A float fixture tensor and its shape.
struct FixtureTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};
FixtureTensor fixtureTensor(const models::SafetensorsFile& file, const std::string& name);

// [N, C, H, W] -> [N, H, W, C] and back.
std::vector<float> nchwToNhwc(const std::vector<float>& v, const std::vector<int64_t>& nchw);
std::vector<float> nhwcToNchw(const std::vector<float>& v, const std::vector<int64_t>& nchw);

// max |a - b| / max |b|: the error relative to the reference's scale.
double relativeError(const std::vector<float>& got, const std::vector<float>& want);

}  // namespace sdgen::test
