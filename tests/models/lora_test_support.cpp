#include "tests/models/lora_test_support.h"

#include <cmath>

#include "engine/dtype.h"
#include "models/safetensors.h"

namespace sdgen::test {

namespace {
float fp16(float v) { return halfToFloat(floatToHalf(v)); }
bool isWeight(const std::string& n) { return n.size() > 7 && n.compare(n.size() - 7, 7, ".weight") == 0; }
}  // namespace

std::string kohyaKey(const std::string& prefix, std::string module) {
  for (char& c : module)
    if (c == '.') c = '_';
  return prefix + module;
}

void addLoraComponent(const models::WeightSource& source, const std::string& component, const KohyaKey& kohya,
                      int64_t rank, float alpha, std::mt19937& rng, SafetensorsWriter& w, LoraWeights& out) {
  std::normal_distribution<float> normal;
  for (const std::string& name : source.names()) {
    const std::vector<int64_t> s = source.shape(name);
    // Embeddings and SDXL's text_projection (read on the host for the pooled embedding) are not LoRA sites: no
    // trainer adapts them (kohya: attention and MLP modules; diffusers: q/k/v/out projections).
    if (!isWeight(name) || (s.size() != 2 && s.size() != 4) || name.find("embedding") != std::string::npos ||
        name == "text_projection.weight")
      continue;
    Factors f;
    f.weightShape = s;
    f.rank = rank;
    f.alpha = alpha;
    int64_t in = 1;
    for (size_t i = 1; i < s.size(); ++i) in *= s[i];
    f.down.resize(size_t(rank * in));
    f.up.resize(size_t(s[0] * rank));
    for (float& v : f.down) v = fp16(normal(rng) / std::sqrt(float(in)));
    for (float& v : f.up) v = fp16(normal(rng) * 0.5f / std::sqrt(float(rank)));
    const std::string module = name.substr(0, name.size() - 7);
    std::vector<int64_t> downShape = {rank, s[1]}, upShape = {s[0], rank};
    if (s.size() == 4) {
      downShape = {rank, s[1], s[2], s[3]};
      upShape = {s[0], rank, 1, 1};
    }
    if (kohya) {
      const std::string key = kohya(module);
      w.add(key + ".lora_down.weight", downShape, f.down, "F16");
      w.add(key + ".lora_up.weight", upShape, f.up, "F16");
      w.add(key + ".alpha", {}, {alpha}, "F16");
    } else {
      w.add(component + "." + module + ".lora_A.weight", downShape, f.down);
      w.add(component + "." + module + ".lora_B.weight", upShape, f.up);
    }
    out[component + "/" + name] = std::move(f);
  }
}

void writeMergedLoras(const std::string& file, const std::string& component,
                      const std::vector<std::pair<const LoraWeights*, float>>& loras) {
  auto src = models::SafetensorsFile::open(file);
  SafetensorsWriter w;
  for (const std::string& name : src.names()) {
    const models::TensorInfo& t = src.get(name);
    if (!models::isFloatDType(t.dtype)) {
      auto b = src.bytes(t);
      w.addRaw(name, models::tensorDTypeName(t.dtype), t.shape, std::string(b.begin(), b.end()));
      continue;
    }
    std::vector<float> v = src.readAsF32(name);
    std::vector<double> merged(v.begin(), v.end());
    for (auto [lora, scale] : loras) {
      auto it = lora->find(component + "/" + name);
      if (it == lora->end()) continue;
      const Factors& f = it->second;
      const size_t out = size_t(f.weightShape[0]), in = v.size() / out;
      const double s = double(scale) * f.alpha / double(f.rank);
      for (size_t o = 0; o < out; ++o)
        for (size_t i = 0; i < in; ++i) {
          double acc = 0;
          for (int64_t r = 0; r < f.rank; ++r) acc += double(f.up[o * f.rank + r]) * f.down[r * in + i];
          merged[o * in + i] += s * acc;
        }
    }
    w.add(name, t.shape, std::vector<float>(merged.begin(), merged.end()));
  }
  w.write(file);
}

double meanAbs(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs(double(a[i]) - b[i]);
  return s / double(a.size());
}

}  // namespace sdgen::test
