// UniPC (diffusers UniPCMultistepScheduler with predict_x0, solver_type bh1 | bh2, no solver_p, final sigma 0,
// lower_order_final): at step i the model's denoised estimate m_i first CORRECTS the latents the previous step
// predicted (multistep_uni_c_bh_update, from the previous step's start x_{i-1} = R1 with its estimates), then
// PREDICTS the next latents from the corrected ones (multistep_uni_p_bh_update), both in the VP terms of
// dpmpp_2m_sampler.cpp:
//   x_t = (sigma_t / sigma_s0) x - alpha_t h_phi_1 m0 - alpha_t B_h (sum_k rho_k D1_k [+ rho_last (m_t - m0)])
// with h = lambda_t - lambda_s0, h_phi_1 = expm1(-h), B_h = -h (bh1) or expm1(-h) (bh2), D1_k = (m_k - m0) / r_k,
// r_k = (lambda_{s_k} - lambda_s0) / h, and rho from the small linear systems of the scheduler (0.5 for the
// predictor of order 2 and the corrector of order 1). The order ramps up from 1 over the first steps and, with
// lower_order_final, down to the steps left. Saved tensors: R1 = the corrected latents the last prediction
// started from, R2.. = the previous estimates, newest first.
#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"
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

// Solves a * x = b (n <= 3) by Gaussian elimination with partial pivoting (torch.linalg.solve).
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    std::swap(a[c], a[p]);
    std::swap(b[c], b[p]);
    for (size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return x;
}

class UniPCSampler final : public LinearSampler {
 public:
  UniPCSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
               const SamplerOptions& options, int steps, uint32_t firstUniformSlot)
      : LinearSampler(options, firstUniformSlot, config.solverOrder + 1, false),
        vPrediction_(config.predictionType == "v_prediction"),
        order_(config.solverOrder),
        bh2_(config.solverType != "bh1"),
        lowerOrderFinal_(config.lowerOrderFinal),
        disableCorrector_(config.disableCorrector) {
    if (order_ < 1 || order_ > 3)
      throw Error("sampler unipc: solver_order " + std::to_string(order_) + " in " + configName(config) +
                  " is not supported (1, 2, 3)");
    StepSchedule s = dpmSolverSchedule(config, training, steps, options.karras);
    timesteps_ = s.timesteps;
    sigmas_ = s.sigmas;
    initNoiseSigma_ = s.initNoiseSigma;
    for (size_t i = 0; i < timesteps_.size(); ++i) {
      const Vp now = vp(sigmas_[i]);
      noising_.push_back({now.alpha, now.sigma});
    }
    finish();
  }

 private:
  // R (powers of the ratios) and b of the scheduler for `order` and hh = -h.
  struct System {
    std::vector<std::vector<double>> r;
    std::vector<double> b;
    double hPhi1, bh;
  };
  System system(const std::vector<double>& rks, int order, double h) const {
    const double hh = -h;
    System s;
    s.hPhi1 = std::expm1(hh);
    s.bh = bh2_ ? std::expm1(hh) : hh;
    double hPhiK = s.hPhi1 / hh - 1, factorial = 1;
    for (int i = 1; i <= order; ++i) {
      std::vector<double> row;
      for (double rk : rks) row.push_back(std::pow(rk, i - 1));
      s.r.push_back(row);
      s.b.push_back(hPhiK * factorial / s.bh);
      factorial *= i + 1;
      hPhiK = hPhiK / hh - 1 / factorial;
    }
    return s;
  }

  std::vector<Evaluation> plan(int firstStep) const override {
    std::vector<Evaluation> out;
    const int n = steps();
    int lowerOrderNums = 0, lastOrder = 0;
    for (int i = firstStep; i < n; ++i) {
      const Combination m = vpDenoised(L(), E(), sigmas_[size_t(i)], vPrediction_);
      // The previous estimates: R(2) newest.
      auto previous = [&](int k) { return R(1 + k); };  // k = 1..order
      // Corrector (multistep_uni_c_bh_update), from the last prediction's start R1 at sigma_{i-1} to sigma_i.
      Combination x = L();
      const bool corrector = i > firstStep &&
                             std::find(disableCorrector_.begin(), disableCorrector_.end(), i - 1) == disableCorrector_.end();
      if (corrector) {
        const Vp t = vp(sigmas_[size_t(i)]), s0 = vp(sigmas_[size_t(i) - 1]);
        const double h = t.lambda - s0.lambda;
        std::vector<double> rks;
        for (int k = 1; k < lastOrder; ++k) rks.push_back((vp(sigmas_[size_t(i - 1 - k)]).lambda - s0.lambda) / h);
        rks.push_back(1.0);
        const System sys = system(rks, lastOrder, h);
        const std::vector<double> rho = lastOrder == 1 ? std::vector<double>{0.5} : solve(sys.r, sys.b);
        const Combination m0 = previous(1);
        Combination res = (m - m0) * rho.back();
        for (int k = 1; k < lastOrder; ++k) res = res + (previous(1 + k) - m0) * (rho[size_t(k) - 1] / rks[size_t(k) - 1]);
        x = R(1) * (t.sigma / s0.sigma) - m0 * (t.alpha * sys.hPhi1) - res * (t.alpha * sys.bh);
      }
      // Predictor (multistep_uni_p_bh_update) from x at sigma_i to sigma_{i+1}; its history: m, previous(1), ...
      int order = lowerOrderFinal_ ? std::min(order_, n - i) : order_;
      order = std::min(order, lowerOrderNums + 1);
      Combination next;
      const double nextSigma = sigmas_[size_t(i) + 1];
      if (nextSigma == 0) {
        if (order != 1)
          throw Error("sampler unipc: the step to sigma 0 must be of order 1 (lower_order_final true)");
        next = m;  // sigma_t = 0, alpha_t = 1, h_phi_1 = -1
      } else {
        const Vp t = vp(nextSigma), s0 = vp(sigmas_[size_t(i)]);
        const double h = t.lambda - s0.lambda;
        std::vector<double> rks;
        for (int k = 1; k < order; ++k) rks.push_back((vp(sigmas_[size_t(i - k)]).lambda - s0.lambda) / h);
        rks.push_back(1.0);
        const System sys = system(rks, order, h);
        next = x * (t.sigma / s0.sigma) - m * (t.alpha * sys.hPhi1);
        if (order >= 2) {
          std::vector<double> rho;
          if (order == 2) {
            rho = {0.5};
          } else {
            std::vector<std::vector<double>> r(size_t(order) - 1);
            for (int a = 0; a + 1 < order; ++a) r[size_t(a)].assign(sys.r[size_t(a)].begin(), sys.r[size_t(a)].end() - 1);
            rho = solve(r, {sys.b.begin(), sys.b.end() - 1});
          }
          Combination res(registerCount());
          for (int k = 1; k < order; ++k) res = res + (previous(k) - m) * (rho[size_t(k) - 1] / rks[size_t(k) - 1]);
          next = next - res * (t.alpha * sys.bh);
        }
      }
      Evaluation e{i, timesteps_[size_t(i)], 1.0, false, {}};
      e.next = {next, x, m};
      for (int k = 1; k < order_; ++k) e.next.push_back(previous(k));
      out.push_back(e);
      lastOrder = order;
      if (lowerOrderNums < order_) ++lowerOrderNums;
    }
    return out;
  }

  bool vPrediction_;
  int order_;
  bool bh2_, lowerOrderFinal_;
  std::vector<int> disableCorrector_;
};

}  // namespace

std::unique_ptr<Sampler> makeUniPCSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                          const SamplerOptions& options, int steps, uint32_t firstUniformSlot) {
  return std::make_unique<UniPCSampler>(config, training, options, steps, firstUniformSlot);
}

}  // namespace sdgen::sampling::detail
