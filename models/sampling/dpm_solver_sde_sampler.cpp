// The stochastic DPM-Solver++ samplers ("sde-dpmsolver++", solver_type "midpoint", final sigma 0), one UNet
// evaluation per step and fresh noise drawn at every step (as diffusers' step() draws it), in the VP terms of
// dpmpp_2m_sampler.cpp (alpha_t = 1 / sqrt(sigma^2 + 1), sigma_t = sigma alpha_t, lambda = log(alpha_t / sigma_t),
// m = the denoised estimate):
//   first order from (x_s, s) to t:  (sigma_t / sigma_s) e^-h x_s + alpha_t (1 - e^-2h) m0 + sigma_t sqrt(1 - e^-2h) n
//   second order adds 0.5 alpha_t (1 - e^-2h) D1, D1 = (m0 - m1) / r0, r0 = h0 / h.
// DPM++ 2M SDE (DPMSolverMultistepScheduler, algorithm_type "sde-dpmsolver++", solver_order 2): second order from
//   the current latents with the previous step's estimate m1 (R1), first order at the first and the last step.
// DPM++ 2S a (DPMSolverSinglestepScheduler, algorithm_type "sde-dpmsolver++", solver_order 2): steps paired by
//   get_order_list ([1, 2, 1, 2, ..., 1] with lower_order_final, which final sigma 0 forces): an order-1 step
//   saves its starting latents (R1) and moves first order; the order-2 step that follows moves from R1 at the
//   pair's first sigma with m1 (R2, the previous estimate) and m0. Its timesteps ignore timestep_spacing
//   (linspace over num_train_timesteps - 1, as DPMSolverSinglestepScheduler.set_timesteps).
// Going to sigma 0 gives x' = m0.
#include <cmath>

#include "models/sampling/linear_sampler.h"
#include "models/sampling/samplers.h"
#include "models/sampling/step_schedule.h"

namespace sdgen::sampling::detail {

namespace {

struct Vp {
  double alpha, sigma, lambda;
};

Vp vp(double s) {
  const double alpha = 1 / std::sqrt(s * s + 1), sigma = s * alpha;
  return {alpha, sigma, std::log(alpha) - std::log(sigma)};
}

class DpmSolverSdeSampler final : public LinearSampler {
 public:
  DpmSolverSdeSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                      const SamplerOptions& options, int steps, uint32_t firstUniformSlot)
      : LinearSampler(options, firstUniformSlot, options.kind == SamplerKind::DpmPP2SAncestral ? 2 : 1, true),
        vPrediction_(config.predictionType == "v_prediction") {
    models::SchedulerConfig c = config;
    if (options.kind == SamplerKind::DpmPP2SAncestral) c.timestepSpacing = "linspace";
    StepSchedule s = dpmSolverSchedule(c, training, steps, options.karras);
    timesteps_ = s.timesteps;
    sigmas_ = s.sigmas;
    initNoiseSigma_ = s.initNoiseSigma;
    for (size_t i = 0; i < timesteps_.size(); ++i) {
      const Vp now = vp(sigmas_[i]);
      noising_.push_back({now.alpha, now.sigma});
    }
    // DPMSolverSinglestepScheduler.get_order_list for solver_order 2 with lower_order_final, then orders[-1] = 1.
    const int n = static_cast<int>(timesteps_.size());
    for (int i = 0; i < n; ++i) orders_.push_back(i % 2 == 0 ? 1 : 2);
    if (n % 2 == 0 && n >= 2) orders_[size_t(n) - 1] = 1;
    orders_.back() = 1;
    finish();
  }

 private:
  std::vector<Evaluation> plan(int firstStep) const override {
    std::vector<Evaluation> out;
    const int n = steps();
    for (int i = firstStep; i < n; ++i) {
      const Combination m0 = vpDenoised(L(), E(), sigmas_[size_t(i)], vPrediction_);
      Evaluation e{i, timesteps_[size_t(i)], 1.0, true, {}};
      const double next = sigmas_[size_t(i) + 1];
      const bool singlestep = kind() == SamplerKind::DpmPP2SAncestral;
      // Multistep: second order unless first (no history) or last. Singlestep: the order list, lowered where the
      // history is missing (the first step run).
      const bool secondOrder = singlestep ? orders_[size_t(i)] == 2 && i > firstStep : i > firstStep && i + 1 < n;
      const bool startsPair = singlestep && !secondOrder;
      // The update's start: the current latents, or the pair's saved start (singlestep, order 2).
      const Combination start = singlestep && secondOrder ? R(1) : L();
      const double startSigma = singlestep && secondOrder ? sigmas_[size_t(i) - 1] : sigmas_[size_t(i)];
      Combination moved;
      if (next == 0) {
        moved = m0;
      } else {
        const Vp t = vp(next), s0 = vp(startSigma);
        const double h = t.lambda - s0.lambda;
        const double growth = -std::expm1(-2.0 * h);  // 1 - e^-2h
        // The estimate the first-order term uses: m0 (multistep), or the pair's first estimate m1 (singlestep).
        const Combination previous = singlestep ? R(2) : R(1);
        const Combination d0 = singlestep && secondOrder ? previous : m0;
        moved = start * (t.sigma / s0.sigma * std::exp(-h)) + d0 * (t.alpha * growth) +
                N() * (t.sigma * std::sqrt(growth));
        if (secondOrder) {
          // r0 = h0 / h, h0 = lambda_s0 - lambda_s1 over the previous step (multistep: h from s0; singlestep: h
          // from the pair's start s1).
          const double lambdaS0 = vp(sigmas_[size_t(i)]).lambda;
          const double lambdaS1 = vp(sigmas_[size_t(i) - 1]).lambda;
          const double r0 = (lambdaS0 - lambdaS1) / h;
          moved = moved + (m0 - previous) * (0.5 * t.alpha * growth / r0);
        }
      }
      if (singlestep)
        e.next = {moved, startsPair ? L() : R(1), m0};
      else
        e.next = {moved, m0};
      out.push_back(e);
    }
    return out;
  }

  bool vPrediction_;
  std::vector<int> orders_;
};

}  // namespace

std::unique_ptr<Sampler> makeDpmSolverSdeSampler(const models::SchedulerConfig& config,
                                                 const TrainingSchedule& training, const SamplerOptions& options,
                                                 int steps, uint32_t firstUniformSlot) {
  return std::make_unique<DpmSolverSdeSampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
