// Seeds, output names, model path and precision chosen before any device work.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <set>

#include "app/generation_plan.h"
#include "tests/test_support.h"

namespace sdgen::app {
namespace {

TEST(GenerationPlan, SingleImageDefaultAndGivenNames) {
  auto plan = planImages("", 42, 1);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].seed, 42u);
  EXPECT_EQ(plan[0].path, "sdgen-42.png");
  plan = planImages("out/cat.png", 7, 1);
  EXPECT_EQ(plan[0].path, "out/cat.png");
}

TEST(GenerationPlan, BatchNumbersNamesAndCountsSeedsUp) {
  auto plan = planImages("out/cat.png", 100, 3);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].path, "out/cat-1.png");
  EXPECT_EQ(plan[1].path, "out/cat-2.png");
  EXPECT_EQ(plan[2].path, "out/cat-3.png");
  EXPECT_EQ(plan[0].seed, 100u);
  EXPECT_EQ(plan[1].seed, 101u);
  EXPECT_EQ(plan[2].seed, 102u);
  plan = planImages("", 5, 2);
  EXPECT_EQ(plan[0].path, "sdgen-5-1.png");
  EXPECT_EQ(plan[1].path, "sdgen-5-2.png");
  plan = planImages("dir.v2/A.PNG", 0, 2);  // the extension keeps its case; dots in folders are left alone
  EXPECT_EQ(plan[1].path, "dir.v2/A-2.PNG");
}

TEST(GenerationPlan, SeedsWrapAround) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  auto plan = planImages("x.png", max, 2);
  EXPECT_EQ(plan[0].seed, max);
  EXPECT_EQ(plan[1].seed, 0u);
}

TEST(GenerationPlan, ChooseSeed) {
  EXPECT_EQ(chooseSeed(uint64_t{123}), 123u);
  std::set<uint64_t> seen;
  for (int i = 0; i < 8; ++i) {
    uint64_t s = chooseSeed(std::nullopt);
    EXPECT_LE(s, 0xFFFFFFFFull);
    seen.insert(s);
  }
  EXPECT_GT(seen.size(), 1u);  // random, not a constant
}

TEST(GenerationPlan, Precision) {
  DeviceInfo gpu;
  gpu.type = "discrete";
  gpu.shaderFloat16 = true;
  gpu.storage16Bit = true;
  EXPECT_EQ(resolvePrecision(PrecisionChoice::Auto, gpu), DType::F16);
  EXPECT_EQ(resolvePrecision(PrecisionChoice::F32, gpu), DType::F32);
  DeviceInfo noFp16 = gpu;
  noFp16.storage16Bit = false;
  EXPECT_EQ(resolvePrecision(PrecisionChoice::Auto, noFp16), DType::F32);
  DeviceInfo cpu = gpu;
  cpu.type = "cpu";
  EXPECT_EQ(resolvePrecision(PrecisionChoice::Auto, cpu), DType::F32);
  EXPECT_EQ(resolvePrecision(PrecisionChoice::F16, cpu), DType::F16);  // asked for: honoured
}

// Sets SDGEN_DATA_DIR for one test and restores it.
class DataDir {
 public:
  explicit DataDir(const std::string& dir) {
    if (const char* old = getenv("SDGEN_DATA_DIR")) saved_ = old;
    setenv("SDGEN_DATA_DIR", dir.c_str(), 1);
  }
  ~DataDir() {
    if (saved_) setenv("SDGEN_DATA_DIR", saved_->c_str(), 1);
    else unsetenv("SDGEN_DATA_DIR");
  }

 private:
  std::optional<std::string> saved_;
};

TEST(GenerationPlan, ModelPath) {
  char tmpl[] = "/tmp/sdgen-plan-test-XXXXXX";
  const std::string root = mkdtemp(tmpl);
  {
    DataDir data(root);
    test::expectErrorContaining([] { resolveModelPath(""); }, root + "/models/builtin/sdgen-tiny");
    std::filesystem::create_directories(root + "/models/builtin/sdgen-tiny");
    EXPECT_EQ(resolveModelPath(""), root + "/models/builtin/sdgen-tiny");
  }
  EXPECT_EQ(resolveModelPath(root), root);
  test::expectErrorContaining([&] { resolveModelPath(root + "/missing.safetensors"); },
                              root + "/missing.safetensors");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace sdgen::app
