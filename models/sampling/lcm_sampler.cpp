// LCM (diffusers LCMScheduler): for LCM-distilled UNets and LCM-LoRA. The timesteps are picked from the
// distillation schedule k * (1..original_inference_steps) - 1, k = num_train_timesteps // original_inference_steps,
// reversed, at floor(linspace(0, original_inference_steps, steps, endpoint=False)) (LCMScheduler.set_timesteps;
// timestep_spacing is not used). Each step predicts x0 (DDPM-style from alpha_bar_t), applies the consistency
// boundary condition denoised = c_out x0 + c_skip x with c_skip = 0.25 / ((10 t)^2 + 0.25) and c_out = 10 t /
// sqrt((10 t)^2 + 0.25) (get_scalings_for_boundary_condition_discrete, sigma_data 0.5, timestep_scaling 10), and
// re-noises it to the next timestep with fresh noise: x' = sqrt(alpha_bar_prev) denoised + sqrt(1 - alpha_bar_prev)
// noise; the last step returns denoised.
#include <cmath>
#include <string>

#include "engine/error.h"
#include "models/sampling/linear_sampler.h"
#include "models/sampling/samplers.h"

namespace sdgen::sampling::detail {

namespace {

class LcmSampler final : public LinearSampler {
 public:
  LcmSampler(const models::SchedulerConfig& config, const TrainingSchedule& training, const SamplerOptions& options,
             int steps, uint32_t firstUniformSlot)
      : LinearSampler(options, firstUniformSlot, 0, true),
        vPrediction_(config.predictionType == "v_prediction"),
        scaling_(config.timestepScaling),
        alphasCumprod_(training.alphasCumprod) {
    const int n = config.numTrainTimesteps, original = config.originalInferenceSteps;
    const std::string where = " (" + configName(config) + ")";
    if (original < 1 || original > n)
      throw Error("sampler lcm: original_inference_steps " + std::to_string(original) +
                  " must be between 1 and num_train_timesteps " + std::to_string(n) + where);
    if (steps < 1 || steps > original)
      throw Error("sampler lcm: steps " + std::to_string(steps) + " must be between 1 and original_inference_steps " +
                  std::to_string(original) + where);
    if (config.clipSample) throw Error("sampler lcm: clip_sample true is not supported" + where);
    const int k = n / original;
    std::vector<int> origin;  // reversed: k * original - 1, ..., k - 1
    for (int i = original; i >= 1; --i) origin.push_back(i * k - 1);
    // np.floor(np.linspace(0, len, num=steps, endpoint=False)): i * (len / steps)
    const double stride = static_cast<double>(origin.size()) / steps;
    for (int i = 0; i < steps; ++i)
      timesteps_.push_back(static_cast<float>(origin[size_t(std::floor(static_cast<double>(i) * stride))]));
    initNoiseSigma_ = 1.0f;
    for (float t : timesteps_) {
      const double a = alphasCumprod_[size_t(t)];
      noising_.push_back({std::sqrt(a), std::sqrt(1 - a)});
    }
    finish();
  }

 private:
  std::vector<Evaluation> plan(int firstStep) const override {
    std::vector<Evaluation> out;
    const int n = steps();
    for (int i = firstStep; i < n; ++i) {
      const float t = timesteps_[size_t(i)];
      const double a = alphasCumprod_[size_t(t)];
      const double b = 1 - a;
      // float32 as diffusers: the integer timestep tensor times timestep_scaling.
      const auto scaled = static_cast<float>(static_cast<double>(t) * scaling_);
      const float cSkip = 0.25f / (scaled * scaled + 0.25f);
      const float cOut = scaled / std::sqrt(scaled * scaled + 0.25f);
      const Combination x0 =
          vPrediction_ ? L() * std::sqrt(a) - E() * std::sqrt(b) : (L() - E() * std::sqrt(b)) * (1 / std::sqrt(a));
      const Combination denoised = x0 * cOut + L() * cSkip;
      Evaluation e{i, t, 1.0, false, {}};
      if (i + 1 < n) {
        const double aPrev = alphasCumprod_[size_t(timesteps_[size_t(i) + 1])];
        e.drawsNoise = true;
        e.next = {denoised * std::sqrt(aPrev) + N() * std::sqrt(1 - aPrev)};
      } else {
        e.next = {denoised};
      }
      out.push_back(e);
    }
    return out;
  }

  bool vPrediction_;
  double scaling_;
  std::vector<float> alphasCumprod_;
};

}  // namespace

std::unique_ptr<Sampler> makeLcmSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                        const SamplerOptions& options, int steps, uint32_t firstUniformSlot) {
  return std::make_unique<LcmSampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
