// Folders shaped like the real checkpoints (issue 15): the tiny models with the scheduler_config.json the real SD
// 1.5 / SD 2.1 releases ship (old diffusers: no timestep_spacing), and with two configs diffusers 0.42.1 writes
// itself (every field explicit), each sampler made as a diffusers user makes it,
// SchedulerClass.from_config(pipe.scheduler.config[, use_karras_sigmas=True]) (tests/data/fixtures/realsched.*,
// written by tests/reference/real_checkpoints.py). On the CPU: the config sdgen resolves for each sampler, and
// the timesteps, sigmas and initial noise scale it gives, equal diffusers'. On the device: the images within
// 1/255 mean absolute difference of diffusers' for every sampler, Karras on and off.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/config/config_files.h"
#include "models/formats/model_files.h"
#include "models/pipeline/text_to_image.h"
#include "models/safetensors.h"
#include "tests/models/diffusers_request.h"
#include "tests/models/models_test_util.h"
#include "tests/models/network_fixture.h"
#include "tests/models/sampling_test_util.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kJson = "fixtures/realsched.json", kTensors = "fixtures/realsched.safetensors";

// The fixture; missing files fail the test (written on the device machine: make_fixtures.py --only realsched).
json loadFixture() {
  const std::string path = test::dataPath(kJson);
  EXPECT_TRUE(fs::is_regular_file(path) && fs::is_regular_file(test::dataPath(kTensors)))
      << path << " / .safetensors missing: tests/reference/make_fixtures.py --only realsched (docs/reference-fixtures.md)";
  if (!fs::is_regular_file(path)) return json::object();
  return json::parse(std::ifstream(path));
}

// The case's folder: its model_index.json and scheduler file, the tiny model's other components (links).
std::string buildFolder(const test::TempDir& dir, const std::string& name, const json& c) {
  const fs::path d = dir.file(name);
  fs::create_directories(d / "scheduler");
  std::ofstream(d / "model_index.json") << c.at("model_index.json").get<std::string>();
  std::ofstream(d / "scheduler" / "scheduler_config.json") << c.at("scheduler_config.json").get<std::string>();
  const fs::path base = test::sourcePath(c.at("base").get<std::string>());
  for (const char* component : {"text_encoder", "tokenizer", "unet", "vae"})
    fs::create_directory_symlink(base / component, d / component);
  return d.string();
}

TEST(RealSchedulerConfigs, ResolvedAsDiffusersResolvesThem) {
  const json fx = loadFixture();
  ASSERT_TRUE(fx.contains("cases"));
  test::TempDir dir;
  const int steps = fx.at("args").at("num_inference_steps");
  for (const auto& [name, c] : fx.at("cases").items()) {
    const models::ModelFiles files = models::openModel(buildFolder(dir, name, c));
    EXPECT_EQ(files.scheduler.fields, models::parseSchedulerFile(c.at("scheduler_config.json"), "x").fields);
    for (const json& run : c.at("runs")) {
      const std::string cls = run.at("class"), id = name + "." + run.at("run").get<std::string>();
      SCOPED_TRACE(id);
      const json& want = run.at("config");
      const models::SchedulerConfig got = models::schedulerConfigFor(files.scheduler, cls);
      EXPECT_EQ(got.predictionType, want.at("prediction_type").get<std::string>());
      EXPECT_EQ(got.timestepSpacing, want.at("timestep_spacing").get<std::string>());
      EXPECT_EQ(got.stepsOffset, want.at("steps_offset").get<int>());
      EXPECT_EQ(got.numTrainTimesteps, want.at("num_train_timesteps").get<int>());
      EXPECT_FLOAT_EQ(got.betaStart, want.at("beta_start").get<double>());
      EXPECT_FLOAT_EQ(got.betaEnd, want.at("beta_end").get<double>());
      EXPECT_EQ(got.betaSchedule, want.at("beta_schedule").get<std::string>());
      if (cls == "DDIMScheduler") {
        EXPECT_EQ(got.setAlphaToOne, want.at("set_alpha_to_one").get<bool>());
        EXPECT_EQ(got.clipSample, want.at("clip_sample").get<bool>());
        EXPECT_EQ(got.clipSampleRange, want.at("clip_sample_range").get<double>());
      }
      const bool karras = run.at("karras").get<bool>() || got.useKarrasSigmas;  // what the pipeline passes
      if (cls == "EulerDiscreteScheduler" || cls == "DPMSolverMultistepScheduler") {
        EXPECT_EQ(karras, want.at("use_karras_sigmas").get<bool>());
        for (auto [field, value] : {std::pair{"sigma_min", got.sigmaMin}, {"sigma_max", got.sigmaMax}}) {
          const json w = want.value(field, json());
          EXPECT_EQ(value.has_value(), !w.is_null()) << field;
          if (value && !w.is_null()) EXPECT_EQ(*value, w.get<double>()) << field;
        }
      }

      sampling::SamplerOptions options = sampling::test::optionsFromName(run.at("run"));
      options.karras = karras;
      const auto sampler = sampling::Sampler::create(got, options, steps, 0);
      const std::vector<double> timesteps = run.at("timesteps");
      ASSERT_EQ(sampler->steps(), static_cast<int>(timesteps.size()));
      // Euler's Karras timesteps are fractional (NumPy's float32 log table): equal to ~1e-4, a UNet cannot tell.
      const double tolerance = options.kind == sampling::SamplerKind::Euler && karras ? 1e-3 : 0.0;
      for (size_t i = 0; i < timesteps.size(); ++i)
        EXPECT_NEAR(sampler->timestep(static_cast<int>(i)), timesteps[i], tolerance) << "timestep " << i;
      if (run.at("sigmas").is_null()) {
        EXPECT_TRUE(sampler->sigmas().empty());
      } else {
        const std::vector<double> sigmas = run.at("sigmas");
        ASSERT_EQ(sampler->sigmas().size(), sigmas.size());
        for (size_t i = 0; i < sigmas.size(); ++i)
          EXPECT_NEAR(sampler->sigmas()[i], sigmas[i], 2e-7 * std::max(1.0, sigmas[i])) << "sigma " << i;
      }
      const double init = run.at("init_noise_sigma");
      EXPECT_NEAR(sampler->initNoiseSigma(), init, 2e-7 * init);
    }
  }
}

class RealSchedulerImages : public test::VulkanTest {};

TEST_F(RealSchedulerImages, EverySamplerMatchesDiffusers) {
  const json fx = loadFixture();
  ASSERT_TRUE(fx.contains("cases"));
  auto tensors = models::SafetensorsFile::open(test::dataPath(kTensors));
  const json& args = fx.at("args");
  test::TempDir dir;
  size_t compared = 0;
  for (const auto& [name, c] : fx.at("cases").items()) {
    pipeline::TextToImage t2i(ctx(), {.modelPath = buildFolder(dir, name, c)});
    for (const json& run : c.at("runs")) {
      const std::string id = name + "." + run.at("run").get<std::string>();
      const sampling::SamplerOptions options = sampling::test::optionsFromName(run.at("run"));
      pipeline::GenerationRequest req = test::diffusersRequest(args);
      req.sampler = options.kind;
      req.karras = options.karras;  // the from_config keyword; the file's use_karras_sigmas applies by itself
      const pipeline::Image img = t2i.generate(req);
      const std::vector<float> want = tensors.readAsF32(run.at("image").get<std::string>());
      ASSERT_EQ(img.pixels.size(), want.size()) << id;
      double sum = 0, sumU8 = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        sum += std::abs(double(img.pixels[i]) - want[i]);
        sumU8 += std::abs(double(img.rgb[i]) - std::nearbyint(want[i] * 255.0)) / 255.0;
      }
      EXPECT_LE(sum / want.size(), 1.0 / 255) << id;
      EXPECT_LE(sumU8 / want.size(), 1.0 / 255) << id;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 24u);  // 4 scheduler files x 6 samplers
}

}  // namespace
}  // namespace sdgen
