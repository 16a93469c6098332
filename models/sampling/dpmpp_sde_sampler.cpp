// DPM++ SDE (diffusers DPMSolverSDEScheduler, k-diffusion's sample_dpmpp_sde with r = 1/2): two UNet evaluations
// per step, the second at the log-midpoint sigma_m = exp(-(t + (t' - t) / 2)) = sqrt(sigma sigma') (t = -log
// sigma), except the last step (to sigma 0), which is one Euler evaluation: N steps are 2N - 1 evaluations. Each
// evaluation with a next sigma above 0 moves ancestrally, sigma_from = sigma to sigma_to (sigma_m, then sigma'):
//   sigma_up = min(sigma_to, sqrt(sigma_to^2 (sigma_from^2 - sigma_to^2) / sigma_from^2)),
//   sigma_down = sqrt(sigma_to^2 - sigma_up^2),  r = sigma_down / sigma,
//   x_next = r x_start - (r - 1) x0 + noise sigma_up
// where x_start is the step's starting latents (saved in R1 for the second evaluation) and x0 the evaluation's
// denoised estimate (at sigma, then at sigma_m).
// The noise: diffusers draws it from a torchsde Brownian tree (BrownianTreeNoiseSampler, seeded by
// noise_sampler_seed or, unset, by torch's global generator); sdgen draws it from the seed's generator, one
// randn per evaluation that moves to a sigma above 0, in that order. The deterministic part is tested exactly
// against diffusers with its noise sampler replaced by those draws (tests/reference/sampler_fixtures.py).
#include <algorithm>
#include <cmath>
#include <string>

#include "models/sampling/linear_sampler.h"
#include "models/sampling/samplers.h"
#include "models/sampling/step_schedule.h"

namespace sdgen::sampling::detail {

namespace {

class DpmPPSdeSampler final : public LinearSampler {
 public:
  DpmPPSdeSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                  const SamplerOptions& options, int steps, uint32_t firstUniformSlot)
      : LinearSampler(options, firstUniformSlot, 1, true), vPrediction_(config.predictionType == "v_prediction") {
    // DPMSolverSDEScheduler's linspace timesteps are float64 (np.linspace(..., dtype=float)).
    StepSchedule s = interpolatedSigmaSchedule(config, training, steps,
                                               {.karras = options.karras,
                                                .exponential = config.useExponentialSigmas,
                                                .float32Linspace = false,
                                                .sampler = "dpmpp_sde"});
    timesteps_ = s.timesteps;
    sigmas_ = s.sigmas;
    initNoiseSigma_ = s.initNoiseSigma;
    std::vector<float> logSigmas;
    for (float v : training.sigmas) logSigmas.push_back(static_cast<float>(std::log(static_cast<double>(v))));
    // _second_order_timesteps: from the float64 sigmas before the final 0 (the float32 ones here differ by
    // < 1e-7 relative, far below what moves a timestep).
    for (size_t i = 0; i + 1 < timesteps_.size(); ++i) {
      const double t = -std::log(double(sigmas_[i])), next = -std::log(double(sigmas_[i + 1]));
      midTimesteps_.push_back(static_cast<float>(sigmaToTimestep(std::exp(-(t + (next - t) * 0.5)), logSigmas)));
    }
    for (size_t i = 0; i < timesteps_.size(); ++i) noising_.push_back({1.0, sigmas_[i]});
    finish();
  }

 private:
  struct Ancestral {
    double up, down;
  };
  static Ancestral ancestral(double from, double to) {
    const double up = std::min(to, std::sqrt(to * to * (from * from - to * to) / (from * from)));
    return {up, std::sqrt(to * to - up * up)};
  }

  std::vector<Evaluation> plan(int firstStep) const override {
    std::vector<Evaluation> out;
    for (int i = firstStep; i < steps(); ++i) {
      const double sigma = sigmas_[size_t(i)], next = sigmas_[size_t(i) + 1];
      const Combination x0 = kDenoised(L(), E(), sigma, vPrediction_);
      Evaluation first{i, timesteps_[size_t(i)], 1 / std::sqrt(sigma * sigma + 1), false, {}};
      if (next == 0) {  // Euler to 0
        first.next = {L() + (L() - x0) * ((next - sigma) / sigma), R(1)};
        out.push_back(first);
        continue;
      }
      // sigma_fn(t + (t_next - t) * 0.5), t = -log(sigma), in double.
      const double t = -std::log(sigma), tNext = -std::log(next);
      const double mid = std::exp(-(t + (tNext - t) * 0.5));
      const Ancestral a = ancestral(sigma, mid);
      const double r = a.down / sigma;
      first.drawsNoise = true;
      first.next = {L() * r - x0 * (r - 1) + N() * a.up, L()};
      Evaluation second{i, midTimesteps_[size_t(i)], 1 / std::sqrt(mid * mid + 1), true, {}};
      const Ancestral b = ancestral(sigma, next);
      const double r2 = b.down / sigma;
      const Combination x0Mid = kDenoised(L(), E(), mid, vPrediction_);
      second.next = {R(1) * r2 - x0Mid * (r2 - 1) + N() * b.up, R(1)};
      out.push_back(first);
      out.push_back(second);
    }
    return out;
  }

  bool vPrediction_;
  std::vector<float> midTimesteps_;  // per step but the last: the second evaluation's timestep
};

}  // namespace

std::unique_ptr<Sampler> makeDpmPPSdeSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                             const SamplerOptions& options, int steps, uint32_t firstUniformSlot) {
  return std::make_unique<DpmPPSdeSampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
