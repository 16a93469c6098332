// The new samplers' schedules and step weights against values recomputed here in float64 from the formulas of
// the diffusers schedulers they match (independent of models/sampling; no fixtures needed): LCM's timestep
// selection, the interleaved evaluations of Heun / DPM2 / DPM++ SDE, the geometric midpoints, exponential
// sigmas, LMS's integrated Lagrange weights, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/sampling/linear_sampler.h"
#include "models/sampling/noise_schedule.h"
#include "tests/test_support.h"

namespace sdgen::sampling {
namespace {

std::unique_ptr<Sampler> make(SamplerKind kind, int steps, bool karras = false, models::SchedulerConfig config = {}) {
  return Sampler::create(config, {kind, karras}, steps, 0);
}

// Weight of operand o (0 latents, 1 model output, 2 noise, 2 + k register k) in target t at evaluation e.
double weight(const Sampler& s, int e, int target, int operand) {
  const int k = dynamic_cast<const LinearSampler&>(s).registerCount();
  return s.evaluationCoefficients(e)[size_t(1 + target * (k + 3) + operand)];
}

TEST(SamplerFormulas, LcmPicksEvenlySpacedDistillationTimesteps) {
  // k = 1000 // 50 = 20: timesteps 999, 979, ..., 19; pick floor(i * 50 / steps).
  for (int steps : {1, 2, 4, 8, 50}) {
    const auto lcm = make(SamplerKind::Lcm, steps);
    ASSERT_EQ(lcm->evaluations(), steps);
    for (int i = 0; i < steps; ++i) {
      const int index = static_cast<int>(std::floor(i * 50.0 / steps));
      EXPECT_EQ(lcm->timestep(i), 999 - 20 * index) << steps << " steps, step " << i;
    }
  }
  const auto four = make(SamplerKind::Lcm, 4);
  EXPECT_EQ(four->timesteps(), (std::vector<float>{999, 759, 499, 259}));
  test::expectErrorContaining([] { make(SamplerKind::Lcm, 51); }, "original_inference_steps 50");
  test::expectErrorContaining([] { make(SamplerKind::Lcm, 4, true); }, "no Karras");
}

TEST(SamplerFormulas, LcmBoundaryConditionAndRenoising) {
  const auto lcm = make(SamplerKind::Lcm, 4);
  const std::vector<float> abar = trainingSchedule({}).alphasCumprod;
  for (int i = 0; i < 4; ++i) {
    const double t = lcm->timestep(i), scaled = 10 * t;
    const double cSkip = 0.25 / (scaled * scaled + 0.25), cOut = scaled / std::sqrt(scaled * scaled + 0.25);
    const double a = abar[size_t(t)];
    const double renoise = i < 3 ? std::sqrt(double(abar[size_t(lcm->timestep(i + 1))])) : 1.0;
    // denoised = cOut (x - sqrt(1-a) e) / sqrt(a) + cSkip x, then * sqrt(abar_prev)
    EXPECT_NEAR(weight(*lcm, i, 0, 0), renoise * (cOut / std::sqrt(a) + cSkip), 1e-6) << i;
    EXPECT_NEAR(weight(*lcm, i, 0, 1), -renoise * cOut * std::sqrt(1 - a) / std::sqrt(a), 1e-6) << i;
    EXPECT_EQ(lcm->drawsNoise(i), i < 3);
  }
}

TEST(SamplerFormulas, SecondOrderSamplersInterleaveTheirEvaluations) {
  for (int steps : {1, 2, 5}) {
    const auto euler = make(SamplerKind::Euler, steps);
    for (SamplerKind kind : {SamplerKind::Heun, SamplerKind::Dpm2, SamplerKind::Dpm2Ancestral, SamplerKind::DpmPPSde}) {
      SCOPED_TRACE(std::string(samplerFlagName(kind)) + " " + std::to_string(steps));
      const auto s = make(kind, steps);
      ASSERT_EQ(s->evaluations(), 2 * steps - 1);
      EXPECT_EQ(s->sigmas(), euler->sigmas());  // leading spacing, float32 linspace unused
      for (int i = 0; i < steps; ++i) {
        const int first = s->firstEvaluation(i);
        EXPECT_EQ(first, 2 * i);
        EXPECT_EQ(s->evaluationTimestep(first), euler->timestep(i));
        const double sigma = euler->sigmas()[size_t(i)], next = euler->sigmas()[size_t(i) + 1];
        EXPECT_NEAR(s->evaluationCoefficients(first)[0], 1 / std::sqrt(sigma * sigma + 1), 1e-7);
        if (i + 1 == steps) break;
        EXPECT_EQ(s->stepOfEvaluation(first + 1), i);
        // The second evaluation's noise level: sigma' (Heun), sqrt(sigma sigma') (DPM2, DPM++ SDE), and for
        // DPM2 a sqrt(sigma sigma_down) with Euler a's sigma_down.
        double level = next;
        if (kind == SamplerKind::Dpm2 || kind == SamplerKind::DpmPPSde) level = std::sqrt(sigma * next);
        if (kind == SamplerKind::Dpm2Ancestral) {
          const double up = std::sqrt(next * next * (sigma * sigma - next * next) / (sigma * sigma));
          level = std::sqrt(sigma * std::sqrt(next * next - up * up));
        }
        EXPECT_NEAR(s->evaluationCoefficients(first + 1)[0], 1 / std::sqrt(level * level + 1), 2e-6);
        if (kind == SamplerKind::Heun) EXPECT_EQ(s->evaluationTimestep(first + 1), euler->timestep(i + 1));
      }
    }
  }
}

TEST(SamplerFormulas, ExponentialSigmasAreGeometric) {
  models::SchedulerConfig config;
  config.useExponentialSigmas = true;
  config.timestepSpacing = "linspace";
  models::SchedulerConfig plain = config;
  plain.useExponentialSigmas = false;
  const auto base = make(SamplerKind::Euler, 6, false, plain);
  for (SamplerKind kind : {SamplerKind::Euler, SamplerKind::Heun, SamplerKind::Lms}) {
    const auto s = make(kind, 6, false, config);
    const std::vector<float>& sg = s->sigmas();
    ASSERT_EQ(sg.size(), 7u);
    EXPECT_NEAR(sg[0], base->sigmas()[0], 1e-6 * sg[0]);
    EXPECT_NEAR(sg[5], base->sigmas()[5], 1e-6);
    const double ratio = std::log(double(sg[5]) / sg[0]) / 5;
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(sg[size_t(i)], sg[0] * std::exp(ratio * i), 2e-6 * sg[0]) << i;
    EXPECT_EQ(sg[6], 0.0f);
  }
  test::expectErrorContaining([&] { make(SamplerKind::UniPC, 4, false, config); }, "no exponential-sigma");
  test::expectErrorContaining([&] { make(SamplerKind::Heun, 4, true, config); }, "exclude each other");
}

TEST(SamplerFormulas, LmsIntegratesLagrangeWeights) {
  const auto lms = make(SamplerKind::Lms, 5);
  const std::vector<float>& s = lms->sigmas();
  // Epsilon prediction: the derivative is the model output itself (weight 1 on E in register 1).
  EXPECT_NEAR(weight(*lms, 0, 1, 1), 1.0, 1e-12);
  // Step 0 (order 1): Euler, s1 - s0.
  EXPECT_NEAR(weight(*lms, 0, 0, 1), double(s[1]) - s[0], 1e-9);
  // Step 1 (order 2): the integrals over [s1, s2] of (tau - s0) / (s1 - s0) and (tau - s1) / (s0 - s1).
  const double s0 = s[0], s1 = s[1], s2 = s[2];
  auto integral = [](double a, double b, double root, double scale) {  // of (tau - root) / scale over [a, b]
    return ((b - root) * (b - root) - (a - root) * (a - root)) / (2 * scale);
  };
  EXPECT_NEAR(weight(*lms, 1, 0, 1), integral(s1, s2, s0, s1 - s0), 1e-9);
  EXPECT_NEAR(weight(*lms, 1, 0, 3), integral(s1, s2, s1, s0 - s1), 1e-9);
  // Later steps weigh four derivatives whose weights sum to the step in sigma (the basis sums to 1).
  for (int i = 3; i < 5; ++i) {
    const double sum = weight(*lms, i, 0, 1) + weight(*lms, i, 0, 3) + weight(*lms, i, 0, 4) + weight(*lms, i, 0, 5);
    EXPECT_NEAR(sum, double(s[size_t(i) + 1]) - s[size_t(i)], 1e-9) << i;
  }
}

TEST(SamplerFormulas, SinglestepTimestepsIgnoreSpacing) {
  // DPMSolverSinglestepScheduler: round(linspace(0, 999, steps + 1))[::-1][:-1] whatever timestep_spacing says.
  for (const char* spacing : {"leading", "trailing", "linspace"}) {
    models::SchedulerConfig c;
    c.timestepSpacing = spacing;
    const auto s = make(SamplerKind::DpmPP2SAncestral, 4, false, c);
    EXPECT_EQ(s->timesteps(), (std::vector<float>{999, 749, 500, 250})) << spacing;  // 999 * k / 4 rounded half-even
  }
}

TEST(SamplerFormulas, KarrasOnlyWhereTheSchedulerHasIt) {
  test::expectErrorContaining([] { make(SamplerKind::Ddim, 4, true); }, "sampler ddim has no Karras");
  for (SamplerKind kind : {SamplerKind::Heun, SamplerKind::Dpm2, SamplerKind::Dpm2Ancestral,
                           SamplerKind::DpmPP2SAncestral, SamplerKind::DpmPPSde, SamplerKind::DpmPP2MSde,
                           SamplerKind::Lms, SamplerKind::UniPC})
    EXPECT_NO_THROW(make(kind, 4, true)) << samplerFlagName(kind);
}

}  // namespace
}  // namespace sdgen::sampling
