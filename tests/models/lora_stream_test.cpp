// LoRA updates on the weight stream (nn::WeightStream, nn::loraUpdates), layout by layout, against the host:
// the merged weight computed in double, then packed as the load packs an ordinary weight. Covers an F16
// checkpoint tensor into fp16 and fp32 storage (a linear layer's [K][NP] layout), the GEGLU projection's row
// interleave (the fused-epilogue layout, which lavapipe never chooses, so the pipeline tests cannot reach it)
// and the Winograd filter bank.
#include <gtest/gtest.h>

#include <random>

#include "engine/dtype.h"
#include "models/nn/lora_merging.h"
#include "models/nn/weight_stream.h"
#include "models/safetensors.h"
#include "ops/conv2d_winograd_math.h"
#include "ops/linear_geglu.h"
#include "tests/models/formats_synthetic.h"
#include "tests/models/models_test_util.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using Floats = std::shared_ptr<const std::vector<float>>;

Floats randomFactor(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  auto v = std::make_shared<std::vector<float>>(n);
  for (float& x : *v) x = normal(rng) * scale;
  return v;
}

// W [out][in] + sum of scale * up . down, in double, rounded to float; `magnitude` gets |W| + sum of
// |scale| * sum |up * down| per element (what the device's fp32 rounding errors are relative to).
std::vector<float> mergedOnHost(const std::vector<float>& w, int64_t out, const std::vector<lora::WeightDelta>& ds,
                                std::vector<float>* magnitude = nullptr) {
  const size_t in = w.size() / size_t(out);
  std::vector<float> r(w.size());
  if (magnitude) magnitude->assign(w.size(), 0.f);
  for (size_t o = 0; o < size_t(out); ++o)
    for (size_t i = 0; i < in; ++i) {
      double acc = w[o * in + i], mag = std::abs(acc);
      for (const lora::WeightDelta& d : ds) {
        double p = 0, pm = 0;
        for (int64_t k = 0; k < d.rank; ++k) {
          const double t = double((*d.up)[o * d.rank + k]) * (*d.down)[k * in + i];
          p += t;
          pm += std::abs(t);
        }
        acc += double(d.scale) * p;
        mag += std::abs(double(d.scale)) * pm;
      }
      r[o * in + i] = float(acc);
      if (magnitude) (*magnitude)[o * in + i] = float(mag);
    }
  return r;
}

std::vector<lora::WeightDelta> twoDeltas(int64_t out, int64_t in) {
  return {{randomFactor(size_t(out) * 4, 1, 0.5f), randomFactor(size_t(in) * 4, 2, 0.3f), 4, 0.35f, "a"},
          {randomFactor(size_t(out) * 2, 3, 0.5f), randomFactor(size_t(in) * 2, 4, 0.3f), 2, -0.8f, "b"}};
}

class LoraStream : public test::VulkanTest {
 protected:
  std::vector<float> download(const Allocation& a, size_t n, DType t) { return test::downloadFloats(ctx(), a, n, t); }
  // The device merges in fp32 (rank + 2 roundings, relative to the terms' magnitude `mag`); fp16 storage may
  // then round to the neighbouring half.
  static void expectClose(const std::vector<float>& got, const std::vector<float>& want,
                          const std::vector<float>& mag, DType storage) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      float tol = 8 * 6e-8f * mag[i];
      if (storage == DType::F16) tol += std::max(std::abs(want[i]) / 1024.f, 6.1e-8f);
      ASSERT_LE(std::abs(got[i] - want[i]), tol) << "element " << i << ": " << got[i] << " vs " << want[i];
    }
  }
};

TEST_F(LoraStream, CheckpointTensorMergedThenPackedInEitherStorage) {
  const int64_t n = 13, k = 20;  // NP = 16: padding columns must stay zero
  test::TempDir dir;
  std::vector<float> w(size_t(n * k));
  for (size_t i = 0; i < w.size(); ++i) w[i] = halfToFloat(floatToHalf(std::sin(float(i)) * 0.3f));
  test::SafetensorsWriter writer;
  writer.add("layer.weight", {n, k}, w, "F16");
  writer.write(dir.file("w.safetensors"));
  auto file = std::make_shared<const models::SafetensorsFile>(models::SafetensorsFile::open(dir.file("w.safetensors")));
  const models::TensorInfo& t = file->get("layer.weight");
  const std::vector<lora::WeightDelta> deltas = twoDeltas(n, k);
  std::vector<float> mag;
  const std::vector<float> merged = mergedOnHost(w, n, deltas, &mag);
  for (DType storage : {DType::F32, DType::F16}) {
    const ops::PackLayout layout = ops::PackLayout::linear(n, k);
    Allocation dst = ctx().allocate(layout.destinationElements() * dtypeSize(storage), "lora stream test");
    nn::WeightStream stream(ctx());
    nn::LoraSite site{.dst = &dst, .storage = storage, .layout = layout};
    stream.pack(models::RawWeight{file, &t, 0, t.size, t.dtype, "layer.weight"}, dst, storage, layout,
                nn::loraUpdates(site, deltas));
    stream.flush();
    std::vector<float> want(layout.destinationElements(), 0.f), wantMag(want.size(), 0.f);
    for (int64_t o = 0; o < n; ++o)
      for (int64_t i = 0; i < k; ++i) {
        want[size_t(i * 16 + o)] = roundToStorage(storage, merged[size_t(o * k + i)]);
        wantMag[size_t(i * 16 + o)] = mag[size_t(o * k + i)];
      }
    expectClose(download(dst, want.size(), storage), want, wantMag, storage);
  }
}

TEST_F(LoraStream, GegluInterleavedRowsTakeInterleavedUpFactors) {
  const int64_t inner = 8, k = 12;
  std::vector<float> w = *randomFactor(size_t(2 * inner * k), 9, 0.4f);
  const std::vector<lora::WeightDelta> deltas = twoDeltas(2 * inner, k);
  std::vector<float> mag, none;
  std::vector<float> want = mergedOnHost(w, 2 * inner, deltas, &mag);
  ops::interleaveGegluRows(want, none, inner, k);
  ops::interleaveGegluRows(mag, none, inner, k);  // what a checkpoint with the merged weight would load as
  std::vector<float> base = w;
  ops::interleaveGegluRows(base, none, inner, k);
  const ops::PackLayout layout = ops::PackLayout::copy(2 * inner * k);  // the interleave is the layout under test
  Allocation dst = ctx().allocate(want.size() * 4, "lora geglu test");
  nn::LoraSite site{.kind = nn::LoraSite::Kind::GegluInterleaved, .dst = &dst, .layout = layout, .inner = inner, .k = k};
  nn::WeightStream stream(ctx());
  stream.pack(base, dst, DType::F32, layout, "geglu", nn::loraUpdates(site, deltas));
  stream.flush();
  expectClose(download(dst, want.size(), DType::F32), want, mag, DType::F32);
}

TEST_F(LoraStream, WinogradFiltersTakeTransformedDownFactors) {
  const int cout = 6, cin = 5;
  std::vector<float> w = *randomFactor(size_t(cout * cin * 9), 11, 0.3f);
  const std::vector<lora::WeightDelta> deltas = twoDeltas(cout, cin * 9);  // LoCon: down [rank, Cin, 3, 3]
  const std::vector<float> want = ops::winograd::packFilters(mergedOnHost(w, cout, deltas), cout, cin);
  const ops::PackLayout layout = ops::PackLayout::copy(int64_t(want.size()));
  Allocation dst = ctx().allocate(want.size() * 4, "lora winograd test");
  nn::LoraSite site{.kind = nn::LoraSite::Kind::WinogradFilters, .dst = &dst, .layout = layout, .cout = cout, .cin = cin};
  nn::WeightStream stream(ctx());
  stream.pack(ops::winograd::packFilters(w, cout, cin), dst, DType::F32, layout, "winograd",
              nn::loraUpdates(site, deltas));
  stream.flush();
  // U's entries are sums of up to 9 weighted taps: allow the rounding of that many terms
  std::vector<float> got = download(dst, want.size(), DType::F32);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-6 * (1 + std::abs(want[i]))) << i;
}

TEST_F(LoraStream, FactorsThatDoNotMakeTheWeightAreRefused) {
  Allocation dst = ctx().allocate(64, "lora test");
  nn::WeightStream stream(ctx());
  nn::LowRankUpdate u{randomFactor(8, 1, 1.f), randomFactor(8, 2, 1.f), 4, 1.f};  // [2,4] . [4,2] = 4 != 6
  test::expectErrorContaining(
      [&] { stream.pack(std::vector<float>(6, 0.f), dst, DType::F32, ops::PackLayout::copy(6), "six", {u}); },
      "LoRA update of six: factors of 8 and 8 values (rank 4) do not make its 6 elements");
}

}  // namespace
}  // namespace sdgen
