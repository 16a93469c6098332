// Sampler schedules (host): timesteps, sigmas and the initial noise scale against diffusers 0.42 (the scheduler
// fixture, and a few values diffusers gives for Stable Diffusion 1.5's config), and the refusal of unsupported
// configurations with messages naming the field and the value.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/sampling/noise_schedule.h"
#include "models/sampling/numpy_like.h"
#include "models/sampling/sampler.h"
#include "models/sampling/step_schedule.h"
#include "tests/models/sampling_test_util.h"

namespace sdgen::sampling {
namespace {

using sdgen::test::errorOf;

models::SchedulerConfig sd15() { return {}; }  // the defaults are SD 1.5's: scaled_linear 0.00085..0.012, leading, offset 1

std::unique_ptr<Sampler> make(SamplerKind kind, int steps, bool karras = false,
                              const models::SchedulerConfig& config = sd15()) {
  return Sampler::create(config, {kind, karras}, steps, 0);
}

TEST(SamplerSchedule, FixtureTimestepsSigmasAndInitialScale) {
  const nlohmann::json runs = test::loadSchedulerFixture();
  ASSERT_FALSE(runs.empty());
  for (const auto& run : runs) {
    const std::string id = run.at("id");
    SCOPED_TRACE(id);
    const models::SchedulerConfig config = test::configFromJson(run.at("config"));
    const auto sampler = Sampler::create(config, test::optionsFromName(run.at("scheduler")), run.at("steps"), 0);
    const std::vector<double> timesteps = run.at("timesteps");
    ASSERT_EQ(sampler->steps(), static_cast<int>(timesteps.size()));
    // Euler's Karras timesteps are fractional, from NumPy's float32 log table: equal to ~1e-4 (a UNet cannot
    // tell); every other timestep is an integer and must be identical.
    const double timestepTolerance = run.at("scheduler") == "euler_karras" ? 1e-3 : 0.0;
    for (size_t i = 0; i < timesteps.size(); ++i)
      EXPECT_NEAR(sampler->timestep(static_cast<int>(i)), timesteps[i], timestepTolerance) << "timestep " << i;
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

// Values diffusers 0.42 gives for Stable Diffusion 1.5's scheduler config (leading spacing, steps_offset 1).
TEST(SamplerSchedule, KnownStableDiffusion15Values) {
  auto euler = make(SamplerKind::Euler, 20);
  ASSERT_EQ(euler->steps(), 20);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(euler->timestep(i), 951 - 50 * i);
  EXPECT_NEAR(euler->sigmas()[0], 11.02834, 1e-4);                 // sigma at timestep 951
  EXPECT_NEAR(euler->initNoiseSigma(), 11.07358, 1e-4);             // sqrt(sigma_max^2 + 1) for leading
  EXPECT_EQ(euler->sigmas().back(), 0.0f);

  auto ddim = make(SamplerKind::Ddim, 50);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(ddim->timestep(i), 981 - 20 * i);
  EXPECT_EQ(ddim->initNoiseSigma(), 1.0f);

  auto dpm = make(SamplerKind::DpmPP2M, 20);  // leading over steps + 1 points: ratio 1000 // 21 = 47
  for (int i = 0; i < 20; ++i) EXPECT_EQ(dpm->timestep(i), 47 * (20 - i) + 1);
}

TEST(SamplerSchedule, TrailingSpacingRoundsHalvesToEven) {
  // 1000 / 16 = 62.5: np.arange(1000, 0, -62.5) has halves, rounded to even before the - 1.
  models::SchedulerConfig c = sd15();
  c.timestepSpacing = "trailing";
  auto ddim = make(SamplerKind::Ddim, 16, false, c);
  const double expected[16] = {999, 937, 874, 811, 749, 687, 624, 561, 499, 437, 374, 311, 249, 187, 124, 61};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(ddim->timestep(i), expected[i]) << i;
  EXPECT_EQ(numpy_like::roundHalfEven(2.5), 2.0);
  EXPECT_EQ(numpy_like::roundHalfEven(3.5), 4.0);
}

TEST(SamplerSchedule, TrainingTableIsDiffusersFloat32) {
  // alphas_cumprod of SD 1.5's betas as torch computes them (first and last entries; float32 values).
  const TrainingSchedule t = trainingSchedule(sd15());
  ASSERT_EQ(t.alphasCumprod.size(), 1000u);
  EXPECT_EQ(t.alphasCumprod[0], 0.99915f);
  EXPECT_NEAR(t.alphasCumprod[999], 0.00466010, 1e-8);
  EXPECT_EQ(configDecimal(0.00085f), 0.00085);
  EXPECT_EQ(configDecimal(0.012f), 0.012);
}

TEST(SamplerSchedule, KarrasSigmasSpanTheirRange) {
  const std::vector<double> s = karrasSigmas(0.03, 14.6, 10);
  ASSERT_EQ(s.size(), 10u);
  EXPECT_NEAR(s.front(), 14.6, 1e-12);
  EXPECT_NEAR(s.back(), 0.03, 1e-12);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i], s[i - 1]);
  // sigmaToTimestep inverts the table at its entries.
  const TrainingSchedule t = trainingSchedule(sd15());
  std::vector<float> logs;
  for (float v : t.sigmas) logs.push_back(std::log(v));
  for (int ts : {0, 1, 500, 998, 999}) EXPECT_NEAR(sigmaToTimestep(t.sigmas[ts], logs), ts, 1e-3);
}

TEST(SamplerSchedule, RefusesUnsupportedConfigurations) {
  models::SchedulerConfig c = sd15();
  c.source = "model/scheduler/scheduler_config.json";
  c.betaSchedule = "squaredcos_cap_v2";
  std::string m = errorOf([&] { make(SamplerKind::Euler, 20, false, c); });
  EXPECT_NE(m.find("beta_schedule 'squaredcos_cap_v2'"), std::string::npos) << m;
  EXPECT_NE(m.find("model/scheduler/scheduler_config.json"), std::string::npos) << m;

  c = sd15();
  c.predictionType = "sample";
  m = errorOf([&] { make(SamplerKind::Ddim, 20, false, c); });
  EXPECT_NE(m.find("prediction_type 'sample'"), std::string::npos) << m;

  c = sd15();
  c.timestepSpacing = "karras";
  m = errorOf([&] { make(SamplerKind::DpmPP2M, 20, false, c); });
  EXPECT_NE(m.find("timestep_spacing 'karras'"), std::string::npos) << m;

  c = sd15();
  c.betaEnd = 0.0001f;
  m = errorOf([&] { make(SamplerKind::Euler, 20, false, c); });
  EXPECT_NE(m.find("beta_end"), std::string::npos) << m;

  m = errorOf([] { make(SamplerKind::Ddim, 20, true); });
  EXPECT_NE(m.find("ddim"), std::string::npos) << m;
  EXPECT_NE(m.find("Karras"), std::string::npos) << m;

  for (int steps : {0, 1001}) {
    m = errorOf([&] { make(SamplerKind::EulerAncestral, steps); });
    EXPECT_NE(m.find("steps " + std::to_string(steps)), std::string::npos) << m;
  }
  // leading + steps_offset past the last training timestep
  m = errorOf([] { make(SamplerKind::Ddim, 1000); });
  EXPECT_NE(m.find("timestep 1000"), std::string::npos) << m;
}

TEST(SamplerSchedule, StepIndexIsChecked) {
  auto s = make(SamplerKind::Euler, 4);
  EXPECT_NE(errorOf([&] { s->timestep(4); }).find("step 4"), std::string::npos);
  EXPECT_NE(errorOf([&] { s->setStepUniforms(-1, [](uint32_t, float) {}); }).find("step -1"), std::string::npos);
}

}  // namespace
}  // namespace sdgen::sampling
