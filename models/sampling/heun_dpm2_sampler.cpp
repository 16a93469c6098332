// Heun (diffusers HeunDiscreteScheduler), DPM2 (KDPM2DiscreteScheduler) and DPM2 ancestral
// (KDPM2AncestralDiscreteScheduler): second-order k-diffusion samplers that evaluate the UNet twice per step,
// except the last step (to sigma 0), which is one Euler evaluation: N steps are 2N - 1 evaluations, as diffusers'
// interleaved timesteps list them. Each keeps one saved tensor R1 between a step's two evaluations.
//   Heun   (step):   d1 = (x - x0(x, sigma)) / sigma;  x_mid = x + d1 dt;  R1 = x + d1 dt / 2  (dt = sigma' - sigma)
//          (second): d2 = (x_mid - x0(x_mid, sigma')) / sigma';  x' = R1 + d2 dt / 2
//   DPM2   (step):   x_mid = x + d1 (sigma_i - sigma), sigma_i = exp(lerp(log sigma', log sigma, 0.5));  R1 = x
//          (second): d2 = (x_mid - x0(x_mid, sigma_i)) / sigma_i;  x' = R1 + d2 (sigma' - sigma)
//   DPM2 a (step):   as DPM2 with sigma_i = exp(lerp(log sigma, log sigma_down, 0.5))
//          (second): x' = R1 + d2 (sigma_down - sigma) + noise sigma_up  (Euler a's sigma_up / sigma_down)
// The second evaluation's model input is x / sqrt(s^2 + 1) at its own noise level (sigma' or sigma_i) and its
// timestep is that level's (_sigma_to_t of sigma_i for DPM2).
#include "models/sampling/exact_float.h"  // first: the interpolated sigmas are float32 tensor math in diffusers

#include <cmath>
#include <string>

#include "engine/error.h"
#include "models/sampling/linear_sampler.h"
#include "models/sampling/samplers.h"
#include "models/sampling/step_schedule.h"

namespace sdgen::sampling::detail {

namespace {

// torch: sigmas.log().lerp(other.log(), 0.5).exp() in float32; lerp with weight 0.5 is end - (end - start) * 0.5.
float logMidpoint(float start, float end) {
  if (start == 0.0f || end == 0.0f) return 0.0f;  // log 0 = -inf: the interpolation is 0 (or unused)
  const float a = std::log(start), b = std::log(end);
  return std::exp(b - (b - a) * 0.5f);
}

std::vector<float> logOfTable(const std::vector<float>& v) {
  std::vector<float> out;
  for (float x : v) out.push_back(static_cast<float>(std::log(static_cast<double>(x))));
  return out;
}

class HeunDpm2Sampler final : public LinearSampler {
 public:
  HeunDpm2Sampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                  const SamplerOptions& options, int steps, uint32_t firstUniformSlot)
      : LinearSampler(options, firstUniformSlot, 1, options.kind == SamplerKind::Dpm2Ancestral),
        vPrediction_(config.predictionType == "v_prediction") {
    const bool dpm2 = options.kind != SamplerKind::Heun;
    if (config.clipSample)
      throw Error(std::string("sampler ") + samplerFlagName(options.kind) +
                  ": clip_sample true in " + configName(config) + " is not supported");
    StepSchedule s = interpolatedSigmaSchedule(
        config, training, steps,
        {.karras = options.karras, .exponential = config.useExponentialSigmas, .roundRemappedTimesteps = dpm2,
         .sampler = samplerFlagName(options.kind)});
    timesteps_ = s.timesteps;
    sigmas_ = s.sigmas;
    initNoiseSigma_ = s.initNoiseSigma;
    const std::vector<float> logSigmas = logOfTable(training.sigmas);
    const size_t n = timesteps_.size();
    midSigma_.assign(n, 0.0);
    midTimestep_.assign(n, 0.0f);
    up_.assign(n, 0.0);
    down_.assign(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
      const float sigma = sigmas_[i], next = sigmas_[i + 1];
      if (options.kind == SamplerKind::Dpm2) {
        midSigma_[i] = logMidpoint(next, sigma);
      } else if (options.kind == SamplerKind::Dpm2Ancestral) {
        // float32 as torch: sigmas_up / sigmas_down over the whole list, the interpolation 0 for the last step.
        const float up = std::sqrt(next * next * (sigma * sigma - next * next) / (sigma * sigma));
        const float down = std::sqrt(next * next - up * up);
        up_[i] = up;
        down_[i] = down;
        midSigma_[i] = i + 1 < n ? logMidpoint(sigma, down) : 0.0f;
      }
      if (midSigma_[i] > 0) midTimestep_[i] = static_cast<float>(sigmaToTimestep(midSigma_[i], logSigmas));
      noising_.push_back({1.0, sigma});
    }
    finish();
  }

 private:
  std::vector<Evaluation> plan(int firstStep) const override {
    std::vector<Evaluation> out;
    const int n = steps();
    for (int i = firstStep; i < n; ++i) {
      const double sigma = sigmas_[size_t(i)], next = sigmas_[size_t(i) + 1];
      const Combination x0 = kDenoised(L(), E(), sigma, vPrediction_);
      const Combination d1 = (L() - x0) * (1 / sigma);
      Evaluation first{i, timesteps_[size_t(i)], 1 / std::sqrt(sigma * sigma + 1), false, {}};
      if (next == 0) {  // the last step: Euler to sigma 0 (HeunDiscreteScheduler's first-order branch)
        first.next = {L() + d1 * (next - sigma), R(1)};
        out.push_back(first);
        continue;
      }
      Evaluation second{i, 0, 1, false, {}};
      if (kind() == SamplerKind::Heun) {
        const double dt = next - sigma;
        first.next = {L() + d1 * dt, L() + d1 * (dt / 2)};
        second.timestep = timesteps_[size_t(i) + 1];
        second.inputScale = 1 / std::sqrt(next * next + 1);
        const Combination d2 = (L() - kDenoised(L(), E(), next, vPrediction_)) * (1 / next);
        second.next = {R(1) + d2 * (dt / 2), R(1)};
      } else {
        const double mid = midSigma_[size_t(i)];
        first.next = {L() + d1 * (mid - sigma), L()};
        second.timestep = midTimestep_[size_t(i)];
        second.inputScale = 1 / std::sqrt(mid * mid + 1);
        const Combination d2 = (L() - kDenoised(L(), E(), mid, vPrediction_)) * (1 / mid);
        if (kind() == SamplerKind::Dpm2) {
          second.next = {R(1) + d2 * (next - sigma), R(1)};
        } else {
          second.drawsNoise = true;
          second.next = {R(1) + d2 * (down_[size_t(i)] - sigma) + N() * up_[size_t(i)], R(1)};
        }
      }
      out.push_back(first);
      out.push_back(second);
    }
    return out;
  }

  bool vPrediction_;
  std::vector<double> midSigma_, up_, down_;  // per step (DPM2: sigma_i; DPM2 a: sigma_i, sigma_up, sigma_down)
  std::vector<float> midTimestep_;
};

}  // namespace

std::unique_ptr<Sampler> makeHeunDpm2Sampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                             const SamplerOptions& options, int steps, uint32_t firstUniformSlot) {
  return std::make_unique<HeunDpm2Sampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
