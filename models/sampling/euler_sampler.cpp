// Euler and Euler ancestral (diffusers EulerDiscreteScheduler with s_churn = 0, and
// EulerAncestralDiscreteScheduler): the model sees x / sqrt(sigma^2 + 1); the denoised estimate x0 gives the
// derivative d = (x - x0) / sigma, and x moves by d * (sigma_next - sigma). The ancestral step moves to
// sigma_down instead and adds noise * sigma_up, with sigma_up = sqrt(sigma_next^2 (sigma^2 - sigma_next^2) /
// sigma^2) and sigma_down = sqrt(sigma_next^2 - sigma_up^2). Karras sigmas for Euler a are an sdgen extension
// (diffusers' ancestral scheduler has none): the same noise levels as Euler's Karras option.
#include <cmath>

#include "models/sampling/samplers.h"
#include "models/sampling/step_schedule.h"

namespace sdgen::sampling::detail {

namespace {

using graph::Expr;

// Uniform layout: c[0] = sqrt(sigma^2 + 1) (model input divisor); x0 = c[1] x + c[2] e; c[3] = sigma;
// c[4] = the step in sigma; ancestral: c[5] = sigma_up.
class EulerSampler final : public Sampler {
 public:
  EulerSampler(const models::SchedulerConfig& config, const TrainingSchedule& training, const SamplerOptions& options,
               int steps, uint32_t firstUniformSlot)
      : Sampler(options, firstUniformSlot), ancestral_(options.kind == SamplerKind::EulerAncestral) {
    StepSchedule s = eulerSchedule(config, training, steps, options.karras);
    timesteps_ = s.timesteps;
    sigmas_ = s.sigmas;
    initNoiseSigma_ = s.initNoiseSigma;
    const bool vPrediction = config.predictionType == "v_prediction";
    for (size_t i = 0; i < timesteps_.size(); ++i) {
      const double sigma = sigmas_[i], next = sigmas_[i + 1];
      const double divisor = std::sqrt(sigma * sigma + 1);
      std::vector<double> c = {divisor};
      if (vPrediction) {  // x0 = v * (-sigma / sqrt(sigma^2 + 1)) + x / (sigma^2 + 1)
        c.push_back(1 / (sigma * sigma + 1));
        c.push_back(-sigma / divisor);
      } else {  // x0 = x - sigma * eps
        c.push_back(1.0);
        c.push_back(-sigma);
      }
      c.push_back(sigma);
      if (ancestral_) {
        const double up = std::sqrt(next * next * (sigma * sigma - next * next) / (sigma * sigma));
        const double down = std::sqrt(next * next - up * up);
        c.push_back(down - sigma);
        c.push_back(up);
      } else {
        c.push_back(next - sigma);
      }
      coefficients_.push_back(c);
      noising_.push_back({1.0, sigma});
    }
  }

  bool needsNoise() const override { return ancestral_; }

  Expr modelInput(const Expr& x) const override { return x / coefficient(0); }

  Expr nextLatents(const Expr& x, const Expr& e, const Expr& noise, const Expr&) const override {
    const char* name = ancestral_ ? "euler_a" : "euler";
    requireOperand(x, e, "model output", name);
    Expr x0 = coefficient(1) * x + coefficient(2) * e;
    Expr derivative = (x - x0) / coefficient(3);
    Expr next = x + derivative * coefficient(4);
    if (!ancestral_) return next;
    requireOperand(x, noise, "noise", name);
    return next + noise * coefficient(5);
  }

 private:
  bool ancestral_;
};

}  // namespace

std::unique_ptr<Sampler> makeEulerSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                          const SamplerOptions& options, int steps, uint32_t firstUniformSlot) {
  return std::make_unique<EulerSampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
