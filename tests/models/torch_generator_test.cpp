// TorchCpuGenerator against torch: a value everyone can check (torch.randn(4) after manual_seed(0)), and the
// fixture tests/data/fixtures/rng.safetensors written by torch (tests/reference/make_fixtures.py): fresh
// generators of three seeds at sizes below, at and above the 16-element vector path, and three successive
// draws from one generator. The fixture is required: its absence fails the test.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "models/safetensors.h"
#include "models/sampling/torch_generator.h"
#include "tests/models/models_test_util.h"

namespace sdgen::sampling {
namespace {

// Distance in units in the last place between two finite floats (0 when bit-identical).
int64_t ulpDistance(float a, float b) {
  auto key = [](float f) {
    const auto bits = static_cast<int64_t>(std::bit_cast<int32_t>(f));
    return bits < 0 ? std::numeric_limits<int32_t>::min() - bits : bits;  // monotonic in the float's value
  };
  return std::llabs(key(a) - key(b));
}

TEST(TorchCpuGenerator, KnownFirstDrawOfSeedZero) {
  TorchCpuGenerator g(0);
  const std::vector<float> v = g.randn(4);
  const float expected[4] = {1.5410f, -0.2934f, -2.1788f, 0.5684f};  // torch.randn(4) after manual_seed(0)
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(v[i], expected[i], 0.00005f) << "element " << i;
}

TEST(TorchCpuGenerator, ManualSeedRestartsTheStreamAndForgetsTheCachedNormal) {
  TorchCpuGenerator g(5);
  const std::vector<float> first = g.randn(3);  // odd count: one cached normal left over
  g.manualSeed(5);
  EXPECT_EQ(g.randn(3), first);
  EXPECT_EQ(g.initialSeed(), 5u);
  // Only the low 32 bits of a seed reach the engine, as in torch.
  TorchCpuGenerator low(7), high((uint64_t{1} << 40) + 7);
  EXPECT_EQ(low.randn(20), high.randn(20));
}

TEST(TorchCpuGenerator, SmallDrawsInterleaveThroughTheCachedSample) {
  // randn(1) twice must give the two halves of one Box-Muller pair, i.e. randn(2) of a fresh generator.
  TorchCpuGenerator a(11), b(11);
  const float x = a.randn(1)[0], y = a.randn(1)[0];
  const std::vector<float> pair = b.randn(2);
  EXPECT_EQ(x, pair[0]);
  EXPECT_EQ(y, pair[1]);
}

TEST(TorchCpuGenerator, TailIsRedrawnAfterTheWholeChunks) {
  // randn(20): 20 uniforms, chunk [0, 16) transformed, then 16 new uniforms for [4, 20): elements 0..3 are
  // those of randn(16) from the same seed, and the uniforms consumed are 36.
  TorchCpuGenerator a(3), b(3), c(3);
  const std::vector<float> twenty = a.randn(20), sixteen = b.randn(16);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(twenty[i], sixteen[i]) << i;
  for (int i = 0; i < 36; ++i) c.random();
  EXPECT_EQ(a.random(), c.random());
}

// ---- the torch fixture ----

std::string rngFixturePath() { return test::sourcePath("tests/data/fixtures/rng.safetensors"); }

class TorchRngFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(rngFixturePath()))
        << rngFixturePath() << " is missing: it is written by tests/reference/make_fixtures.py --only rng";
    file_.emplace(models::SafetensorsFile::open(rngFixturePath()));
  }
  // Compares a draw with the fixture tensor; the AVX2 math is bit-exact, scalar libm within 1 ulp.
  void expectMatches(const std::string& name, const std::vector<float>& got, int64_t maxUlp = 0) {
    const std::vector<float> want = file_->readAsF32(name);
    ASSERT_EQ(got.size(), want.size()) << name;
    int64_t worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const int64_t d = ulpDistance(got[i], want[i]);
      worst = std::max(worst, d);
      ASSERT_LE(d, maxUlp) << name << " element " << i << ": " << got[i] << " vs torch " << want[i];
    }
    RecordProperty(name + ".max_ulp", std::to_string(worst));
  }
  size_t elements(const std::string& name) const { return static_cast<size_t>(file_->get(name).elementCount()); }

  std::optional<models::SafetensorsFile> file_;
};

TEST_F(TorchRngFixture, FreshGeneratorsMatchTorch) {
  for (uint64_t seed : {0ull, 42ull, 123456789ull}) {
    for (const char* which : {"n4", "n15", "n16", "n100", "latent"}) {
      const std::string name = "randn.seed" + std::to_string(seed) + "." + which;
      TorchCpuGenerator g(seed);
      expectMatches(name, g.randn(elements(name)));
    }
  }
}

TEST_F(TorchRngFixture, SuccessiveDrawsContinueTheStream) {
  TorchCpuGenerator g(7);
  for (const char* name : {"seq7.a", "seq7.b", "seq7.c"}) expectMatches(name, g.randn(elements(name)));
}

}  // namespace
}  // namespace sdgen::sampling
