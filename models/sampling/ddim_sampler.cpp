// DDIM with eta = 0 (diffusers DDIMScheduler.step): from the model output, the predicted clean latents x0 and
// noise eps, then x_prev = sqrt(alpha_bar_prev) * x0 + sqrt(1 - alpha_bar_prev) * eps, where alpha_bar_prev is
// taken num_train_timesteps // steps timesteps earlier (or, past timestep 0, 1 with set_alpha_to_one, else
// alpha_bar[0]). clip_sample clamps x0 to [-clip_sample_range, clip_sample_range].
#include <cmath>

#include "models/sampling/samplers.h"
#include "models/sampling/step_schedule.h"

namespace sdgen::sampling::detail {

namespace {

using graph::Expr;

// Uniform layout: x0 = (c[0] x + c[1] e) / c[2]; eps = c[3] x + c[4] e; next = c[5] x0 + c[6] eps.
class DdimSampler final : public Sampler {
 public:
  DdimSampler(const models::SchedulerConfig& config, const TrainingSchedule& training, const SamplerOptions& options,
              int steps, uint32_t firstUniformSlot)
      : Sampler(options, firstUniformSlot),
        clip_(config.clipSample),
        clipRange_(static_cast<float>(config.clipSampleRange)) {
    StepSchedule s = ddimSchedule(config, training, steps);
    timesteps_ = s.timesteps;
    initNoiseSigma_ = s.initNoiseSigma;
    const bool vPrediction = config.predictionType == "v_prediction";
    const double finalAlphaBar = config.setAlphaToOne ? 1.0 : training.alphasCumprod[0];
    const int stride = config.numTrainTimesteps / steps;
    for (float tf : timesteps_) {
      const int t = static_cast<int>(tf), prev = t - stride;
      const double a = training.alphasCumprod[t];
      const double aPrev = prev >= 0 ? training.alphasCumprod[prev] : finalAlphaBar;
      const double sqrtA = std::sqrt(a), sqrtB = std::sqrt(1 - a);
      std::vector<double> c;
      if (vPrediction)  // x0 = sqrt(a) x - sqrt(1-a) v, eps = sqrt(a) v + sqrt(1-a) x
        c = {sqrtA, -sqrtB, 1.0, sqrtB, sqrtA};
      else  // x0 = (x - sqrt(1-a) eps) / sqrt(a)
        c = {1.0, -sqrtB, sqrtA, 0.0, 1.0};
      c.push_back(std::sqrt(aPrev));
      c.push_back(std::sqrt(1 - aPrev));
      coefficients_.push_back(c);
      noising_.push_back({sqrtA, sqrtB});
    }
  }

  Expr nextLatents(const Expr& x, const Expr& e, const Expr&, const Expr&) const override {
    requireOperand(x, e, "model output", "ddim");
    Expr x0 = (coefficient(0) * x + coefficient(1) * e) / coefficient(2);
    if (clip_) x0 = graph::clamp(x0, -clipRange_, clipRange_);
    Expr eps = coefficient(3) * x + coefficient(4) * e;
    return coefficient(5) * x0 + coefficient(6) * eps;
  }

 private:
  bool clip_;
  float clipRange_;
};

}  // namespace

std::unique_ptr<Sampler> makeDdimSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                         const SamplerOptions& options, int steps, uint32_t firstUniformSlot) {
  return std::make_unique<DdimSampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
