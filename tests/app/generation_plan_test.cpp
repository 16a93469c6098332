// Seeds, output names, model path and precision chosen before any device work.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
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

namespace sdgen::app {
namespace {

namespace fs = std::filesystem;

// A model folder holding only sdgen.json with `text` (readModelDefaults reads nothing else).
std::string modelFolderWith(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("sdgen-defaults-test-" + name);
  fs::create_directories(dir);
  std::ofstream(dir / "sdgen.json") << text;
  return dir.string();
}

TEST(ModelDefaults, EveryField) {
  // The layout of models/builtin/sdgen-tiny/sdgen.json (other top-level fields are ignored).
  std::string dir = modelFolderWith("every-field", R"({"name": "m", "defaults": {"width": 64, "height": 48,
      "steps": 16, "cfg_scale": 5.0, "sampler": "dpmpp_2m", "karras": true, "negative_prompt": "blurry"},
      "vocabulary": {"color": ["red"]}})");
  ModelDefaults d = readModelDefaults(dir);
  EXPECT_EQ(d.width, 64);
  EXPECT_EQ(d.height, 48);
  EXPECT_EQ(d.steps, 16);
  EXPECT_EQ(d.cfgScale, 5.0f);
  EXPECT_EQ(d.sampler, sampling::SamplerKind::DpmPP2M);
  EXPECT_EQ(d.karras, true);
  EXPECT_EQ(d.negativePrompt, "blurry");
  fs::remove_all(dir);
}

TEST(ModelDefaults, BuiltinModelHasThem) {
  ModelDefaults d = readModelDefaults(std::string(SDGEN_SOURCE_DIR) + "/models/builtin/sdgen-tiny");
  EXPECT_TRUE(d.width && d.height && d.steps && d.cfgScale && d.sampler);
}

TEST(ModelDefaults, NoneWithoutSdgenJson) {
  ModelDefaults d = readModelDefaults(std::string(SDGEN_SOURCE_DIR) + "/tests/data/tiny-sd1");
  EXPECT_FALSE(d.width || d.height || d.steps || d.cfgScale || d.sampler || d.karras || d.negativePrompt);
  ModelDefaults file = readModelDefaults(std::string(SDGEN_SOURCE_DIR) + "/tests/data/tiny-sd1-ldm.safetensors");
  EXPECT_FALSE(file.steps);
}

TEST(ModelDefaults, ExplicitFlagsWin) {
  ModelDefaults d;
  d.width = 64, d.height = 48, d.steps = 16, d.cfgScale = 5.f, d.sampler = sampling::SamplerKind::DpmPP2M;
  d.karras = true, d.negativePrompt = "blurry";
  CliOptions none = applyModelDefaults(parseCommandLine({"-p", "x"}), d);
  EXPECT_EQ(none.width, 64);
  EXPECT_EQ(none.height, 48);
  EXPECT_EQ(none.steps, 16);
  EXPECT_EQ(none.cfgScale, 5.f);
  EXPECT_EQ(none.sampler, sampling::SamplerKind::DpmPP2M);
  EXPECT_TRUE(none.karras);
  EXPECT_EQ(none.negativePrompt, "blurry");
  CliOptions all = applyModelDefaults(parseCommandLine({"-p", "x", "-W", "32", "-H", "16", "--steps", "3", "--cfg-scale",
                                                        "1", "--sampler", "ddim", "-n", ""}),
                                      d);
  EXPECT_EQ(all.width, 32);
  EXPECT_EQ(all.height, 16);
  EXPECT_EQ(all.steps, 3);
  EXPECT_EQ(all.cfgScale, 1.f);
  EXPECT_EQ(all.sampler, sampling::SamplerKind::Ddim);
  EXPECT_TRUE(all.karras);               // --karras cannot be switched off, so the model's true stays
  EXPECT_EQ(all.negativePrompt, "");     // an explicitly empty negative prompt wins too
  CliOptions w0 = applyModelDefaults(parseCommandLine({"-p", "x", "-W", "0"}), d);
  EXPECT_EQ(w0.width, 64);  // -W 0 means "the default", which is the model's
  CliOptions noDefaults = applyModelDefaults(parseCommandLine({"-p", "x"}), ModelDefaults{});
  EXPECT_EQ(noDefaults.steps, 20);
  EXPECT_EQ(noDefaults.sampler, sampling::SamplerKind::EulerAncestral);
}

TEST(ModelDefaults, InvalidValuesNameTheFileAndField) {
  auto expectError = [](const std::string& json, const std::string& needle) {
    std::string dir = modelFolderWith(std::to_string(std::hash<std::string>{}(json)), json);
    try {
      readModelDefaults(dir);
      ADD_FAILURE() << "no error for " << json;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("sdgen.json"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
  };
  expectError(R"({"defaults": {"width": 100}})", "'defaults.width' must be a multiple of 8");
  expectError(R"({"defaults": {"steps": 0}})", "'defaults.steps' must be an integer from 1 to 1000");
  expectError(R"({"defaults": {"sampler": "k_lms"}})", "'defaults.sampler' must be one of");
  expectError(R"({"defaults": {"karras": "yes"}})", "'defaults.karras' must be true or false");
  expectError(R"({"defaults": {"cfg_scale": "high"}})", "'defaults.cfg_scale' must be a number");
  expectError(R"({"defaults": 3})", "'defaults' must be an object");
  expectError("not json", "is not a JSON object");
  std::string ok = modelFolderWith("partial", R"({"defaults": {"steps": 7}, "name": "x"})");
  ModelDefaults d = readModelDefaults(ok);
  EXPECT_EQ(d.steps, 7);
  EXPECT_FALSE(d.width);
  fs::remove_all(ok);
}

}  // namespace
}  // namespace sdgen::app

namespace sdgen::app {
namespace {

// Finding 1 of issue 24 (docs/reliability.md): a deeply nested value in sdgen.json was quoted in the error
// message through nlohmann's recursive dump() and overflowed the stack; now the file is refused naming it.
TEST(ModelDefaults, DeeplyNestedValueIsAnErrorNotACrash) {
  const std::string deep = std::string(300000, '[') + std::string(300000, ']');
  std::string dir = modelFolderWith("deep", "{\"defaults\": {\"width\": " + deep + "}}");
  try {
    readModelDefaults(dir);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sdgen.json' nests JSON deeper than 64 levels"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sdgen::app
