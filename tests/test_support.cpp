#include "tests/test_support.h"

#include "engine/tensor_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

namespace sdgen::test {

namespace {
std::unique_ptr<Context> gContext;
}

Context& context() {
  if (!gContext) {
    ContextOptions options;
    options.validation = true;  // tests always run with validation
    gContext = std::make_unique<Context>(options);
  }
  return *gContext;
}

void shutdown() { gContext.reset(); }

size_t validationMessageCount() { return gContext ? gContext->instance().validation().count() : 0; }

void VulkanTest::TearDown() {
  size_t now = validationMessageCount();
  if (now != before_) {
    auto msgs = gContext->instance().validation().messages();
    ADD_FAILURE() << (now - before_) << " Vulkan validation message(s) during this test; last: " << msgs.back();
  }
}

Allocation uploadFloats(Context& ctx, std::span<const float> values, DType dtype, const char* what) {
  return sdgen::uploadFloats(ctx, values, dtype, what);
}

std::vector<float> downloadFloats(Context& ctx, const Allocation& a, size_t count, DType dtype) {
  return sdgen::downloadFloats(ctx, a, count, dtype);
}

size_t differingBits(const std::vector<float>& a, const std::vector<float>& b) {
  size_t d = a.size() != b.size() ? 1 : 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) d += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return d;
}

void poison(Context& ctx, const Allocation& a) {
  std::vector<uint8_t> bytes(a.size(), 0xff);  // all-ones is NaN in fp32 and in fp16
  ctx.upload(a, 0, bytes);
}

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

float roundTo(DType dtype, float v) { return roundToStorage(dtype, v); }

}  // namespace sdgen::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  sdgen::test::shutdown();
  return rc;
}
