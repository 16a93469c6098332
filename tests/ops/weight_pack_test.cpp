// Weight packing on the device (ops/weight_pack.h, shaders/weights/pack_weights.slang) against the host packing
// it replaces at load time: the same raw checkpoint elements (F32, F16, BF16: random bit patterns, so NaNs,
// infinities, subnormals and halfway cases all occur) decoded on the host as SafetensorsFile decodes them and
// packed by LinearWeights' / Conv2dWeights' host constructors must give the same bytes, for fp32 and fp16
// storage, odd N / Cout / Cin, 1x1 and 3x3 and non-square kernels, fused (concatenated) linear layers and biases.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "engine/command_sequence.h"
#include "ops/conv2d_weights.h"
#include "ops/conv2d_winograd_math.h"
#include "ops/linear_geglu.h"
#include "ops/linear_weights.h"
#include "ops/weight_pack.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

using ops::PackLayout;
using ops::RawDType;

// Raw elements as a checkpoint stores them, and their values as the host loader decodes them.
struct RawTensor {
  RawDType dtype;
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

RawTensor randomRaw(RawDType dtype, size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  RawTensor t{dtype, std::vector<uint8_t>(count * ops::rawDTypeSize(dtype)), std::vector<float>(count)};
  for (size_t i = 0; i < count; ++i) {
    if (dtype == RawDType::F32) {
      // Half of the values near fp16's range (rounding, subnormal and overflow cases), half any bit pattern.
      uint32_t bits = rng();
      if (i % 2) bits = (bits & 0x807fffffu) | ((100u + rng() % 50u) << 23);
      std::memcpy(t.bytes.data() + i * 4, &bits, 4);
      std::memcpy(&t.values[i], &bits, 4);
    } else {
      uint16_t bits = static_cast<uint16_t>(rng());
      std::memcpy(t.bytes.data() + i * 2, &bits, 2);
      t.values[i] = dtype == RawDType::F16 ? halfToFloat(bits) : std::bit_cast<float>(uint32_t(bits) << 16);
    }
  }
  return t;
}

class WeightPackTest : public test::VulkanTest {
 protected:
  std::vector<uint8_t> bytesOf(const Allocation& a, uint64_t n) {
    std::vector<uint8_t> out(n);
    ctx().download(a, 0, out);
    return out;
  }
  // The raw tensor in device memory, as the weight stream leaves it in scratch.
  Allocation upload(const RawTensor& t) {
    Allocation a = ctx().allocate(std::max<size_t>(t.bytes.size(), 4), "raw weights");
    ctx().upload(a, 0, t.bytes);
    return a;
  }
  void pack(const std::vector<std::pair<const Allocation*, const RawTensor*>>& parts, const Allocation& dst,
            DType storage, const std::vector<PackLayout>& layouts) {
    ctx().upload(dst, 0, std::vector<uint8_t>(dst.size(), 0xAB));  // bytes no part writes show as 0xAB
    CommandSequence seq(ctx());
    for (size_t i = 0; i < parts.size(); ++i)
      ops::packWeights(ctx(), seq, {parts[i].first->address(), parts[i].second->bytes.size(), parts[i].second->dtype},
                       dst, storage, layouts[i], "test part " + std::to_string(i));
    seq.end();
    seq.run();
    // The host packing (what the weight stream does where device memory is mapped) writes the same bytes, and
    // leaves the same bytes alone.
    std::vector<uint8_t> host(dst.size(), 0xAB);
    for (size_t i = 0; i < parts.size(); ++i)
      ops::packWeightsOnHost(parts[i].second->bytes, parts[i].second->dtype, host, storage, layouts[i],
                             "test part " + std::to_string(i));
    EXPECT_EQ(host, bytesOf(dst, dst.size()));
  }
  static std::string caseName(RawDType src, DType storage) {
    return std::string(ops::rawDTypeName(src)) + " -> " + dtypeName(storage);
  }
};

constexpr RawDType kSources[] = {RawDType::F32, RawDType::F16, RawDType::BF16};
constexpr DType kStorages[] = {DType::F32, DType::F16};

TEST_F(WeightPackTest, LinearMatchesHostPacking) {
  struct Case { int64_t n, k; };
  uint32_t seed = 1;
  for (Case c : {Case{1, 1}, Case{5, 3}, Case{13, 7}, Case{8, 16}, Case{77, 33}, Case{320, 40}})
    for (RawDType src : kSources)
      for (DType storage : kStorages) {
        SCOPED_TRACE("N " + std::to_string(c.n) + " K " + std::to_string(c.k) + " " + caseName(src, storage));
        RawTensor w = randomRaw(src, size_t(c.n * c.k), seed++), b = randomRaw(src, size_t(c.n), seed++);
        ops::LinearWeights host(ctx(), w.values, c.n, c.k, b.values, storage, "host");
        auto device = ops::LinearWeights::allocate(ctx(), c.n, c.k, true, storage, "device");
        Allocation rw = upload(w), rb = upload(b);
        pack({{&rw, &w}}, device.weightMemory(), storage, {PackLayout::linear(c.n, c.k)});
        pack({{&rb, &b}}, device.biasMemory(), DType::F32, {PackLayout::vector(c.n, 0, host.paddedOut(), true)});
        const uint64_t wBytes = uint64_t(c.k) * host.paddedOut() * dtypeSize(storage);
        EXPECT_EQ(bytesOf(host.weightMemory(), wBytes), bytesOf(device.weightMemory(), wBytes));
        EXPECT_EQ(bytesOf(host.biasMemory(), host.paddedOut() * 4), bytesOf(device.biasMemory(), host.paddedOut() * 4));
      }
}

// The GEGLU projection's rows read in the interleaved order of its fused epilogue (PackLayout::gegluInterleaved):
// the kernel and the host packing write exactly the bytes of the host interleave (ops::interleaveGegluRows)
// followed by the plain linear packing, which is what the loader did before.
TEST_F(WeightPackTest, GegluInterleaveMatchesTheHostPermutation) {
  struct Case { int64_t inner, k; };
  uint32_t seed = 150;
  for (Case c : {Case{4, 3}, Case{8, 5}, Case{12, 16}, Case{20, 33}})
    for (RawDType src : kSources)
      for (DType storage : kStorages) {
        SCOPED_TRACE("inner " + std::to_string(c.inner) + " K " + std::to_string(c.k) + " " + caseName(src, storage));
        const int64_t n = 2 * c.inner;
        RawTensor w = randomRaw(src, size_t(n * c.k), seed++), b = randomRaw(src, size_t(n), seed++);
        std::vector<float> wi = w.values, bi = b.values;
        ops::interleaveGegluRows(wi, bi, c.inner, c.k);
        ops::LinearWeights host(ctx(), wi, n, c.k, bi, storage, "host");
        auto device = ops::LinearWeights::allocate(ctx(), n, c.k, true, storage, "device");
        Allocation rw = upload(w), rb = upload(b);
        pack({{&rw, &w}}, device.weightMemory(), storage,
             {PackLayout::gegluInterleaved(PackLayout::linear(n, c.k), c.inner)});
        pack({{&rb, &b}}, device.biasMemory(), DType::F32,
             {PackLayout::gegluInterleaved(PackLayout::vector(n, 0, host.paddedOut(), true), c.inner)});
        const uint64_t wBytes = uint64_t(c.k) * host.paddedOut() * dtypeSize(storage);
        EXPECT_EQ(bytesOf(host.weightMemory(), wBytes), bytesOf(device.weightMemory(), wBytes));
        EXPECT_EQ(bytesOf(host.biasMemory(), host.paddedOut() * 4), bytesOf(device.biasMemory(), host.paddedOut() * 4));
      }
  test::expectErrorContaining([] { PackLayout::gegluInterleaved(PackLayout::linear(10, 3), 5); },
                              "GEGLU interleave: 10 rows are not 2 x 5 with inner % 4 == 0");
}

TEST_F(WeightPackTest, FusedLinearPartsMatchHostPackingOfTheConcatenation) {
  const int64_t k = 6;
  const std::vector<int64_t> widths = {5, 3, 7};  // odd widths: parts share 32-bit words of fp16 rows
  uint32_t seed = 100;
  for (RawDType src : kSources)
    for (DType storage : kStorages) {
      SCOPED_TRACE(caseName(src, storage));
      std::vector<RawTensor> w, b;
      std::vector<float> allW, allB;
      for (int64_t n : widths) {
        w.push_back(randomRaw(src, size_t(n * k), seed++));
        b.push_back(randomRaw(src, size_t(n), seed++));
        allW.insert(allW.end(), w.back().values.begin(), w.back().values.end());
        allB.insert(allB.end(), b.back().values.begin(), b.back().values.end());
      }
      const int64_t total = 15;
      ops::LinearWeights host(ctx(), allW, total, k, allB, storage, "host");
      auto device = ops::LinearWeights::allocate(ctx(), total, k, true, storage, "device");
      std::vector<Allocation> raw;
      for (size_t i = 0; i < widths.size(); ++i) raw.push_back(upload(w[i])), raw.push_back(upload(b[i]));
      std::vector<std::pair<const Allocation*, const RawTensor*>> wParts, bParts;
      std::vector<PackLayout> wLayouts, bLayouts;
      int64_t offset = 0;
      for (size_t i = 0; i < widths.size(); ++i) {
        const bool last = i + 1 == widths.size();
        wParts.push_back({&raw[2 * i], &w[i]});
        bParts.push_back({&raw[2 * i + 1], &b[i]});
        wLayouts.push_back(PackLayout::linearPart(widths[i], k, offset, host.paddedOut(), last));
        bLayouts.push_back(PackLayout::vector(widths[i], offset, host.paddedOut(), last));
        offset += widths[i];
      }
      pack(wParts, device.weightMemory(), storage, wLayouts);
      pack(bParts, device.biasMemory(), DType::F32, bLayouts);
      const uint64_t wBytes = uint64_t(k) * host.paddedOut() * dtypeSize(storage);
      EXPECT_EQ(bytesOf(host.weightMemory(), wBytes), bytesOf(device.weightMemory(), wBytes));
      EXPECT_EQ(bytesOf(host.biasMemory(), host.paddedOut() * 4), bytesOf(device.biasMemory(), host.paddedOut() * 4));
    }
}

TEST_F(WeightPackTest, ConvGemmLayoutMatchesHostPacking) {
  struct Case { int cout, cin, kh, kw; };
  uint32_t seed = 200;
  for (Case c : {Case{3, 5, 3, 3}, Case{7, 1, 3, 3}, Case{4, 6, 1, 1}, Case{1, 1, 1, 1}, Case{9, 2, 3, 1},
                 Case{5, 3, 2, 3}, Case{33, 17, 3, 3}})
    for (RawDType src : kSources)
      for (DType storage : kStorages) {
        SCOPED_TRACE("Cout " + std::to_string(c.cout) + " Cin " + std::to_string(c.cin) + " " +
                     std::to_string(c.kh) + "x" + std::to_string(c.kw) + " " + caseName(src, storage));
        const size_t count = size_t(c.cout) * c.cin * c.kh * c.kw;
        RawTensor w = randomRaw(src, count, seed++), b = randomRaw(src, size_t(c.cout), seed++);
        ops::Conv2dParams p{c.kh, c.kw, 1, 1, c.kh / 2, c.kw / 2, 1, 1};
        ops::Conv2dWeightsOptions o;
        o.storage = storage;
        o.packWinograd = false;
        ops::Conv2dWeights host(ctx(), c.cout, c.cin, p, w.values, b.values, o);
        auto device = ops::Conv2dWeights::allocate(ctx(), c.cout, c.cin, p, o);
        Allocation rw = upload(w), rb = upload(b);
        pack({{&rw, &w}}, device.gemm(), storage, {PackLayout::convGemm(c.cout, c.cin, c.kh, c.kw)});
        pack({{&rb, &b}}, device.bias(), DType::F32, {PackLayout::vector(c.cout, 0, c.cout, true)});
        EXPECT_EQ(bytesOf(host.gemm(), count * dtypeSize(storage)), bytesOf(device.gemm(), count * dtypeSize(storage)));
        EXPECT_EQ(bytesOf(host.bias(), size_t(c.cout) * 4), bytesOf(device.bias(), size_t(c.cout) * 4));
      }
}

// The Winograd F(4,3) filter layout: the host packing (mapped memory) writes exactly winograd::packFilters' bytes
// (the double transform the loader used before); the kernel computes G g G^T in fp32, within a few ulps of it
// (relative to the filter's scale: |U - U_host| <= 4e-7 * max(1, |g|_max) per element); fp16 storage is refused.
TEST_F(WeightPackTest, WinogradFiltersMatchTheDoubleTransform) {
  struct Case { int cout, cin; };
  uint32_t seed = 250;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  for (Case c : {Case{1, 1}, Case{4, 3}, Case{7, 5}, Case{16, 9}, Case{33, 20}})
    for (RawDType src : kSources) {
      SCOPED_TRACE("Cout " + std::to_string(c.cout) + " Cin " + std::to_string(c.cin) + " " + ops::rawDTypeName(src));
      const size_t count = size_t(c.cout) * c.cin * 9;
      RawTensor w{src, std::vector<uint8_t>(count * ops::rawDTypeSize(src)), std::vector<float>(count)};
      for (size_t i = 0; i < count; ++i) {  // finite filter values (the transform mixes nine of them)
        float v = d(rng);
        if (src == RawDType::F32) {
          std::memcpy(w.bytes.data() + i * 4, &v, 4);
        } else {
          const uint16_t bits = src == RawDType::F16 ? floatToHalf(v) : uint16_t(std::bit_cast<uint32_t>(v) >> 16);
          std::memcpy(w.bytes.data() + i * 2, &bits, 2);
          v = src == RawDType::F16 ? halfToFloat(bits) : std::bit_cast<float>(uint32_t(bits) << 16);
        }
        w.values[i] = v;
      }
      ++seed;
      const std::vector<float> expected = ops::winograd::packFilters(w.values, c.cout, c.cin);
      const PackLayout layout = PackLayout::winogradF43(c.cout, c.cin);
      ASSERT_EQ(layout.destinationElements(), expected.size());
      std::vector<uint8_t> host(expected.size() * 4, 0xAB);
      ops::packWeightsOnHost(w.bytes, src, host, DType::F32, layout, "winograd");
      EXPECT_EQ(std::memcmp(host.data(), expected.data(), host.size()), 0) << "host bytes differ from packFilters";

      Allocation raw = upload(w), dst = ctx().allocate(expected.size() * 4, "winograd U");
      ctx().upload(dst, 0, std::vector<uint8_t>(dst.size(), 0xAB));
      CommandSequence seq(ctx());
      ops::packWeights(ctx(), seq, {raw.address(), w.bytes.size(), src}, dst, DType::F32, layout, "winograd");
      seq.end();
      seq.run();
      std::vector<float> got(expected.size());
      ctx().download(dst, 0, {reinterpret_cast<uint8_t*>(got.data()), got.size() * 4});
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, double(std::abs(got[i] - expected[i])));
      EXPECT_LE(worst, 4e-7 * 2.0) << "the kernel's fp32 transform is off the double one";
    }
  RawTensor t = randomRaw(RawDType::F16, 9 * 4, 9);
  Allocation raw = upload(t), dst = ctx().allocate(36 * 4 * 2, "fp16 U");
  CommandSequence seq(ctx());
  test::expectErrorContaining(
      [&] { ops::packWeights(ctx(), seq, {raw.address(), t.bytes.size(), RawDType::F16}, dst, DType::F16,
                             PackLayout::winogradF43(2, 2), "conv.weight"); },
      "conv.weight: the Winograd filter layout takes 3x3 filters into fp32 storage");
}

TEST_F(WeightPackTest, CopyConvertsLikeTheHostUpload) {
  uint32_t seed = 300;
  for (RawDType src : kSources)
    for (DType storage : kStorages) {
      SCOPED_TRACE(caseName(src, storage));
      // Larger than one dispatch's grid (65535 groups of 256) would take too long on lavapipe; the grid-stride
      // loop is exercised by a count that is not a multiple of the group size.
      RawTensor t = randomRaw(src, 100003, seed++);
      Allocation host = test::uploadFloats(ctx(), t.values, storage);
      Allocation device = ctx().allocate(t.values.size() * dtypeSize(storage), "device copy");
      Allocation raw = upload(t);
      pack({{&raw, &t}}, device, storage, {PackLayout::copy(int64_t(t.values.size()))});
      const uint64_t n = t.values.size() * dtypeSize(storage);
      EXPECT_EQ(bytesOf(host, n), bytesOf(device, n));
    }
}

TEST_F(WeightPackTest, RefusesLayoutsThatDoNotFit) {
  RawTensor t = randomRaw(RawDType::F16, 12, 7);
  Allocation raw = upload(t);
  Allocation small = ctx().allocate(16, "small");
  CommandSequence seq(ctx());
  test::expectErrorContaining(
      [&] { ops::packWeights(ctx(), seq, {raw.address(), 24, RawDType::F16}, small, DType::F32,
                             PackLayout::linear(4, 3), "layer.weight"); },
      "layer.weight: packing writes 96 bytes into an allocation of 16");
  test::expectErrorContaining(
      [&] { ops::packWeights(ctx(), seq, {raw.address(), 24, RawDType::F16}, small, DType::F32,
                             PackLayout::linear(5, 3), "layer.weight"); },
      "layer.weight: packing reads 30 bytes of F16 but the raw tensor has 24");
  // The host packing refuses the same layouts with the same messages.
  std::vector<uint8_t> hostSmall(16);
  test::expectErrorContaining(
      [&] {
        ops::packWeightsOnHost(t.bytes, RawDType::F16, hostSmall, DType::F32, PackLayout::linear(4, 3), "layer.weight");
      },
      "layer.weight: packing writes 96 bytes into an allocation of 16");
  test::expectErrorContaining(
      [&] {
        ops::packWeightsOnHost(t.bytes, RawDType::F16, hostSmall, DType::F32, PackLayout::linear(5, 3), "layer.weight");
      },
      "layer.weight: packing reads 30 bytes of F16 but the raw tensor has 24");
}

}  // namespace
}  // namespace sdgen
