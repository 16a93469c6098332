// LMS (diffusers LMSDiscreteScheduler.step with its default order 4): linear multistep over the derivatives
// d = (x - x0) / sigma of the last `order` steps, x' = x + sum_k c_k d_{i-k}, where c_k integrates the Lagrange
// basis polynomial of sigma_{i-k} over the sigmas sigma_{i-k'} (k' < order) from sigma_i to sigma_{i+1}
// (get_lms_coefficient; diffusers integrates with scipy's quad, exact for these polynomials of degree <= 3, as is
// the 4-point Gauss-Legendre rule here). order = min(step_index + 1, 4) counts from the schedule's first step, the
// sum only over the derivatives kept since the generation started (zip() in step() truncates), as diffusers
// does after set_begin_index. R1..R3 hold the previous derivatives, newest first.
#include <algorithm>
#include <array>
#include <cmath>

#include "models/sampling/linear_sampler.h"
#include "models/sampling/samplers.h"
#include "models/sampling/step_schedule.h"

namespace sdgen::sampling::detail {

namespace {

constexpr int kOrder = 4;

// The integral over [a, b] of the Lagrange basis polynomial of node `j` over nodes[0..count).
double lagrangeIntegral(const std::vector<double>& nodes, int j, double a, double b) {
  static const std::array<double, 4> x = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563,
                                          0.8611363115940526};
  static const std::array<double, 4> w = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461,
                                          0.3478548451374538};
  double sum = 0;
  for (size_t q = 0; q < x.size(); ++q) {
    const double tau = (a + b) / 2 + (b - a) / 2 * x[q];
    double prod = 1;
    for (size_t k = 0; k < nodes.size(); ++k)
      if (static_cast<int>(k) != j) prod *= (tau - nodes[k]) / (nodes[size_t(j)] - nodes[k]);
    sum += w[q] * prod;
  }
  return sum * (b - a) / 2;
}

class LmsSampler final : public LinearSampler {
 public:
  LmsSampler(const models::SchedulerConfig& config, const TrainingSchedule& training, const SamplerOptions& options,
             int steps, uint32_t firstUniformSlot)
      : LinearSampler(options, firstUniformSlot, kOrder - 1, false),
        vPrediction_(config.predictionType == "v_prediction") {
    StepSchedule s = interpolatedSigmaSchedule(
        config, training, steps,
        {.karras = options.karras, .exponential = config.useExponentialSigmas, .sampler = "lms"});
    timesteps_ = s.timesteps;
    sigmas_ = s.sigmas;
    initNoiseSigma_ = s.initNoiseSigma;
    for (size_t i = 0; i < timesteps_.size(); ++i) noising_.push_back({1.0, sigmas_[i]});
    finish();
  }

 private:
  std::vector<Evaluation> plan(int firstStep) const override {
    std::vector<Evaluation> out;
    for (int i = firstStep; i < steps(); ++i) {
      const double sigma = sigmas_[size_t(i)];
      const Combination d = (L() - kDenoised(L(), E(), sigma, vPrediction_)) * (1 / sigma);
      const int order = std::min(i + 1, kOrder);
      const int kept = std::min(i - firstStep + 1, kOrder);
      std::vector<double> nodes;  // sigma_{i-k}, k < order
      for (int k = 0; k < order; ++k) nodes.push_back(sigmas_[size_t(i - k)]);
      Combination next = L();
      for (int k = 0; k < std::min(order, kept); ++k) {
        const double c = lagrangeIntegral(nodes, k, sigma, sigmas_[size_t(i) + 1]);
        next = next + (k == 0 ? d : R(k)) * c;
      }
      Evaluation e{i, timesteps_[size_t(i)], 1 / std::sqrt(sigma * sigma + 1), false, {}};
      e.next = {next, d, R(1), R(2)};
      out.push_back(e);
    }
    return out;
  }

  bool vPrediction_;
};

}  // namespace

std::unique_ptr<Sampler> makeLmsSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                        const SamplerOptions& options, int steps, uint32_t firstUniformSlot) {
  return std::make_unique<LmsSampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
