// DPM++ 2M (diffusers DPMSolverMultistepScheduler with algorithm_type "dpmsolver++", solver_order 2,
// solver_type "midpoint", final_sigmas_type "zero"). In the half-log-SNR lambda = log(alpha_t / sigma_t), with
// alpha_t = 1 / sqrt(sigma^2 + 1) and sigma_t = sigma * alpha_t, the denoised estimate m0 (x0 from the model
// output) advances x by
//   first order:  x' = (sigma_t' / sigma_t) x - alpha_t' (exp(-h) - 1) m0,                h = lambda' - lambda
//   second order: the same, minus 0.5 alpha_t' (exp(-h) - 1) (m0 - m1) / r0,   r0 = (lambda - lambda_prev) / h
// where m1 is the previous step's estimate (the history). The first step has no history and the last step is
// first order too: with final_sigmas_type "zero", diffusers always lowers the final step's order (the
// lower_order_final rule for fewer than 15 steps is then implied); going to sigma 0 makes it x' = m0.
#include <cmath>

#include "models/sampling/samplers.h"
#include "models/sampling/step_schedule.h"

namespace sdgen::sampling::detail {

namespace {

using graph::Expr;

struct AlphaSigma {
  double alpha, sigma, lambda;
};

AlphaSigma alphaSigma(double s) {
  const double alpha = 1 / std::sqrt(s * s + 1), sigma = s * alpha;
  return {alpha, sigma, std::log(alpha) - std::log(sigma)};
}

// Uniform layout: m0 = (c[0] x + c[1] e) / c[2]; next = c[3] x + c[4] m0 + c[5] (m0 - m1).
class DpmPP2MSampler final : public Sampler {
 public:
  DpmPP2MSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                 const SamplerOptions& options, int steps, uint32_t firstUniformSlot)
      : Sampler(options, firstUniformSlot) {
    StepSchedule s = dpmSolverSchedule(config, training, steps, options.karras);
    timesteps_ = s.timesteps;
    sigmas_ = s.sigmas;
    initNoiseSigma_ = s.initNoiseSigma;
    vPrediction_ = config.predictionType == "v_prediction";
    const size_t n = timesteps_.size();
    for (size_t i = 0; i < n; ++i) {
      coefficients_.push_back(row(i, i == 0 || i + 1 == n));
      const AlphaSigma now = alphaSigma(sigmas_[i]);
      noising_.push_back({now.alpha, now.sigma});
    }
  }

  // diffusers' scheduler starts without history (lower_order_nums 0) wherever the generation begins.
  void beginAt(int step) override {
    checkStep(step);
    coefficients_[size_t(step)] = row(size_t(step), true);
  }

  bool needsHistory() const override { return true; }

  Expr nextLatents(const Expr& x, const Expr& e, const Expr&, const Expr& history) const override {
    requireOperand(x, e, "model output", "dpmpp_2m");
    requireOperand(x, history, "history", "dpmpp_2m");
    Expr m0 = denoised(x, e);
    return coefficient(3) * x + coefficient(4) * m0 + coefficient(5) * (m0 - history);
  }

  Expr nextHistory(const Expr& x, const Expr& e) const override {
    requireOperand(x, e, "model output", "dpmpp_2m");
    return denoised(x, e);
  }

 private:
  std::vector<double> row(size_t i, bool firstOrder) const {
    const AlphaSigma now = alphaSigma(sigmas_[i]);
    std::vector<double> c;
    if (vPrediction_)  // m0 = alpha_t x - sigma_t v
      c = {now.alpha, -now.sigma, 1.0};
    else  // m0 = (x - sigma_t eps) / alpha_t
      c = {1.0, -now.sigma, now.alpha};
    const double nextSigma = sigmas_[i + 1];
    if (nextSigma == 0) {  // to sigma 0: x' = m0
      c.insert(c.end(), {0.0, 1.0, 0.0});
      return c;
    }
    const AlphaSigma next = alphaSigma(nextSigma);
    const double h = next.lambda - now.lambda;
    const double e = next.alpha * std::expm1(-h);
    double historyWeight = 0;
    if (!firstOrder) {
      const double r0 = (now.lambda - alphaSigma(sigmas_[i - 1]).lambda) / h;
      historyWeight = -0.5 * e / r0;
    }
    c.insert(c.end(), {next.sigma / now.sigma, -e, historyWeight});
    return c;
  }

  Expr denoised(const Expr& x, const Expr& e) const {
    return (coefficient(0) * x + coefficient(1) * e) / coefficient(2);
  }

  bool vPrediction_ = false;
};

}  // namespace

std::unique_ptr<Sampler> makeDpmPP2MSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                            const SamplerOptions& options, int steps, uint32_t firstUniformSlot) {
  return std::make_unique<DpmPP2MSampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
