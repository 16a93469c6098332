#pragma once
// Shared by the sampler tests: the diffusers scheduler fixture (tests/data/fixtures/schedulers.{json,safetensors},
// written by tests/reference/make_fixtures.py), and a float64 reference of each scheduler's step written
// directly from diffusers 0.42's step() functions (independently of the expressions under test), driven by
// the fixture's fake model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/config/model_config.h"
#include "models/sampling/noise_schedule.h"
#include "models/sampling/sampler.h"
#include "tests/models/models_test_util.h"

namespace sdgen::sampling::test {

inline std::string schedulerFixtureJson() { return sdgen::test::sourcePath("tests/data/fixtures/schedulers.json"); }
inline std::string schedulerFixtureTensors() {
  return sdgen::test::sourcePath("tests/data/fixtures/schedulers.safetensors");
}

// The fixture's runs; fails the calling test (fatal) when the files are missing.
inline nlohmann::json loadSchedulerFixture() {
  EXPECT_TRUE(std::filesystem::exists(schedulerFixtureJson()) && std::filesystem::exists(schedulerFixtureTensors()))
      << schedulerFixtureJson() << " / .safetensors missing: written by tests/reference/make_fixtures.py "
      << "--only schedulers";
  if (!std::filesystem::exists(schedulerFixtureJson())) return nlohmann::json::array();
  return nlohmann::json::parse(std::ifstream(schedulerFixtureJson())).at("runs");
}

// A diffusers scheduler config (dict(sched.config)) as the fields the samplers read.
inline models::SchedulerConfig configFromJson(const nlohmann::json& j) {
  models::SchedulerConfig c;
  c.numTrainTimesteps = j.value("num_train_timesteps", c.numTrainTimesteps);
  c.betaStart = j.value("beta_start", static_cast<double>(c.betaStart));
  c.betaEnd = j.value("beta_end", static_cast<double>(c.betaEnd));
  c.betaSchedule = j.value("beta_schedule", c.betaSchedule);
  c.predictionType = j.value("prediction_type", c.predictionType);
  c.stepsOffset = j.value("steps_offset", c.stepsOffset);
  c.timestepSpacing = j.value("timestep_spacing", c.timestepSpacing);
  c.setAlphaToOne = j.value("set_alpha_to_one", false);
  c.clipSample = j.value("clip_sample", false);
  return c;
}

// The fixture's scheduler names: ddim, euler, euler_karras, euler_a, dpmpp_2m, dpmpp_2m_karras.
inline SamplerOptions optionsFromName(const std::string& name) {
  SamplerOptions o;
  o.karras = name.ends_with("_karras");
  const std::string base = o.karras ? name.substr(0, name.size() - 7) : name;
  o.kind = *parseSamplerKind(base);
  return o;
}

// The fixture's fake model: out = 0.3 * model_input + 0.05 * cos(t / 100) (the cosine in double).
inline double fakeModelOffset(double timestep) { return 0.05 * std::cos(timestep / 100.0); }

// diffusers' step() of each scheduler in float64, over the schedule (timesteps, sigmas) of a Sampler.
class ReferenceSampler {
 public:
  ReferenceSampler(const models::SchedulerConfig& config, const Sampler& sampler)
      : config_(config), kind_(sampler.kind()), timesteps_(sampler.timesteps()), training_(trainingSchedule(config)) {
    for (float s : sampler.sigmas()) sigmas_.push_back(s);
  }

  std::vector<double> scaleModelInput(const std::vector<double>& x, int step) const {
    if (kind_ != SamplerKind::Euler && kind_ != SamplerKind::EulerAncestral) return x;
    const double sigma = sigmas_[step];
    std::vector<double> out;
    for (double v : x) out.push_back(v / std::sqrt(sigma * sigma + 1));
    return out;
  }

  // One step; `noise` is used by Euler ancestral.
  std::vector<double> step(const std::vector<double>& out, int step, const std::vector<double>& x,
                           const std::vector<double>& noise) {
    switch (kind_) {
      case SamplerKind::Ddim: return ddim(out, step, x);
      case SamplerKind::Euler:
      case SamplerKind::EulerAncestral: return euler(out, step, x, noise);
      case SamplerKind::DpmPP2M: return dpm(out, step, x);
      default: break;  // the LinearSampler kinds: sampler_linear_test.cpp
    }
    return {};
  }

 private:
  bool v() const { return config_.predictionType == "v_prediction"; }

  std::vector<double> ddim(const std::vector<double>& e, int step, const std::vector<double>& x) const {
    const int n = config_.numTrainTimesteps, steps = static_cast<int>(timesteps_.size());
    const int t = static_cast<int>(timesteps_[step]), prev = t - n / steps;
    const double a = training_.alphasCumprod[t];
    const double ap = prev >= 0 ? training_.alphasCumprod[prev] : (config_.setAlphaToOne ? 1.0 : training_.alphasCumprod[0]);
    const double b = 1 - a;
    std::vector<double> r(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      double x0, eps;
      if (v()) {
        x0 = std::sqrt(a) * x[i] - std::sqrt(b) * e[i];
        eps = std::sqrt(a) * e[i] + std::sqrt(b) * x[i];
      } else {
        x0 = (x[i] - std::sqrt(b) * e[i]) / std::sqrt(a);
        eps = e[i];
      }
      if (config_.clipSample) x0 = std::clamp(x0, -1.0, 1.0);
      r[i] = std::sqrt(ap) * x0 + std::sqrt(1 - ap) * eps;
    }
    return r;
  }

  std::vector<double> euler(const std::vector<double>& e, int step, const std::vector<double>& x,
                            const std::vector<double>& noise) const {
    const double sigma = sigmas_[step], next = sigmas_[step + 1];
    std::vector<double> r(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double x0 = v() ? e[i] * (-sigma / std::sqrt(sigma * sigma + 1)) + x[i] / (sigma * sigma + 1)
                            : x[i] - sigma * e[i];
      const double derivative = (x[i] - x0) / sigma;
      if (kind_ == SamplerKind::Euler) {
        r[i] = x[i] + derivative * (next - sigma);
      } else {
        const double up = std::sqrt(next * next * (sigma * sigma - next * next) / (sigma * sigma));
        const double down = std::sqrt(next * next - up * up);
        r[i] = x[i] + derivative * (down - sigma) + noise[i] * up;
      }
    }
    return r;
  }

  // DPMSolverMultistepScheduler.step with dpmsolver++, order 2, midpoint, lower_order_final, final sigma 0.
  std::vector<double> dpm(const std::vector<double>& e, int step, const std::vector<double>& x) {
    const int steps = static_cast<int>(timesteps_.size());
    auto alphaSigma = [](double s) { return std::pair{1 / std::sqrt(s * s + 1), s / std::sqrt(s * s + 1)}; };
    auto lambda = [](std::pair<double, double> as) { return std::log(as.first) - std::log(as.second); };
    const auto [alphaS0, sigmaS0] = alphaSigma(sigmas_[step]);
    std::vector<double> m0(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      m0[i] = v() ? alphaS0 * x[i] - sigmaS0 * e[i] : (x[i] - sigmaS0 * e[i]) / alphaS0;
    previous_ = current_;
    current_ = m0;
    const bool lowerOrderFinal = step == steps - 1;  // final_sigmas_type "zero"
    const auto [alphaT, sigmaT] = alphaSigma(sigmas_[step + 1]);
    const double lambdaT = lambda({alphaT, sigmaT}), lambdaS0 = lambda({alphaS0, sigmaS0});
    const double h = lambdaT - lambdaS0;
    std::vector<double> r(x.size());
    if (lowerOrderNums_ < 1 || lowerOrderFinal) {
      for (size_t i = 0; i < x.size(); ++i) r[i] = (sigmaT / sigmaS0) * x[i] - (alphaT * (std::exp(-h) - 1.0)) * m0[i];
    } else {
      const double lambdaS1 = lambda(alphaSigma(sigmas_[step - 1]));
      const double r0 = (lambdaS0 - lambdaS1) / h;
      for (size_t i = 0; i < x.size(); ++i) {
        const double d1 = (1.0 / r0) * (m0[i] - previous_[i]);
        r[i] = (sigmaT / sigmaS0) * x[i] - (alphaT * (std::exp(-h) - 1.0)) * m0[i] -
               0.5 * (alphaT * (std::exp(-h) - 1.0)) * d1;
      }
    }
    if (lowerOrderNums_ < 2) ++lowerOrderNums_;
    return r;
  }

  models::SchedulerConfig config_;
  SamplerKind kind_;
  std::vector<float> timesteps_;
  std::vector<double> sigmas_;
  TrainingSchedule training_;
  std::vector<double> current_, previous_;
  int lowerOrderNums_ = 0;
};

}  // namespace sdgen::sampling::test
