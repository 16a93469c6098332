#include "tests/models/network_fixture.h"

#include <algorithm>
#include <cstring>
#include <cmath>

#include "engine/error.h"

namespace sdgen::test {

std::string dataPath(const std::string& relative) { return std::string(SDGEN_SOURCE_DIR) + "/tests/data/" + relative; }

FixtureTensor fixtureTensor(const models::SafetensorsFile& file, const std::string& name) {
  const models::TensorInfo& info = file.get(name);
  FixtureTensor t{info.shape, {}};
  if (info.dtype == models::TensorDType::I64) {  // token ids
    auto bytes = file.bytes(info);
    t.values.resize(info.elementCount());
    for (size_t i = 0; i < t.values.size(); ++i) {
      int64_t v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      t.values[i] = static_cast<float>(v);
    }
    return t;
  }
  t.values = file.readAsF32(name);
  return t;
}

std::vector<float> nchwToNhwc(const std::vector<float>& v, const std::vector<int64_t>& s) {
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  std::vector<float> out(v.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) out[((a * h + y) * w + x) * c + ch] = v[((a * c + ch) * h + y) * w + x];
  return out;
}

std::vector<float> nhwcToNchw(const std::vector<float>& v, const std::vector<int64_t>& s) {
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  std::vector<float> out(v.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) out[((a * c + ch) * h + y) * w + x] = v[((a * h + y) * w + x) * c + ch];
  return out;
}

double relativeError(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) throw Error("relativeError: sizes differ");
  double err = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    err = std::max(err, std::abs(double(got[i]) - want[i]));
    scale = std::max(scale, std::abs(double(want[i])));
  }
  return scale > 0 ? err / scale : err;
}

}  // namespace sdgen::test
