#include "models/sampling/linear_sampler.h"

#include <cmath>
#include <string>

#include "engine/error.h"

namespace sdgen::sampling {

using graph::Expr;

Combination Combination::operator+(const Combination& o) const {
  Combination r = *this;
  for (size_t i = 0; i < w_.size(); ++i) r.w_[i] += o.w_[i];
  return r;
}

Combination Combination::operator-(const Combination& o) const { return *this + o * -1.0; }

Combination Combination::operator*(double s) const {
  Combination r = *this;
  for (double& v : r.w_) v *= s;
  return r;
}

Combination kDenoised(const Combination& x, const Combination& e, double sigma, bool vPrediction) {
  if (vPrediction) return x * (1 / (sigma * sigma + 1)) + e * (-sigma / std::sqrt(sigma * sigma + 1));
  return x - e * sigma;
}

Combination vpDenoised(const Combination& x, const Combination& e, double sigma, bool vPrediction) {
  const double alpha = 1 / std::sqrt(sigma * sigma + 1), sigmaT = sigma * alpha;
  if (vPrediction) return x * alpha - e * sigmaT;
  return (x - e * sigmaT) * (1 / alpha);
}

bool LinearSampler::drawsNoise(int evaluation) const {
  checkEvaluation(evaluation);
  return noise_[size_t(evaluation)];
}

Expr LinearSampler::modelInput(const Expr& latents) const { return latents * coefficient(0); }

Expr LinearSampler::nextLatents(const Expr& latents, const Expr& modelOutput, const Expr& noise, const Expr&) const {
  if (registers_ != 0)
    throw Error("sampler " + std::string(samplerFlagName(kind())) + " keeps " + std::to_string(registers_) +
                " saved tensors: record it with nextValue");
  return nextValue(0, latents, modelOutput, noise, {});
}

Expr LinearSampler::nextValue(int target, const Expr& latents, const Expr& modelOutput, const Expr& noise,
                              const std::vector<Expr>& registers) const {
  const char* name = samplerFlagName(kind());
  if (target < 0 || target > registers_)
    throw Error("sampler " + std::string(name) + ": target " + std::to_string(target) + " is outside 0.." +
                std::to_string(registers_));
  requireOperand(latents, modelOutput, "model output", name);
  if (usesNoise_) requireOperand(latents, noise, "noise", name);
  if (static_cast<int>(registers.size()) != registers_)
    throw Error("sampler " + std::string(name) + " needs " + std::to_string(registers_) + " saved tensors, got " +
                std::to_string(registers.size()));
  for (const Expr& r : registers) requireOperand(latents, r, "saved-state", name);
  const uint32_t base = 1 + uint32_t(target) * uint32_t(registers_ + 3);
  Expr sum = coefficient(base) * latents + coefficient(base + 1) * modelOutput;
  if (usesNoise_) sum = sum + coefficient(base + 2) * noise;
  for (int k = 0; k < registers_; ++k) sum = sum + coefficient(base + 3 + uint32_t(k)) * registers[size_t(k)];
  return sum;
}

NoiseLevel LinearSampler::noisingAfter(int evaluation) const {
  checkEvaluation(evaluation);
  if (evaluations() == steps()) return Sampler::noisingAfter(evaluation);
  return {1.0, sigmas_.at(size_t(evaluation + 2) / 2)};
}

void LinearSampler::beginAt(int step) {
  checkStep(step);
  install(plan(step), step);
}

void LinearSampler::install(const std::vector<Evaluation>& evaluations, int firstStep) {
  // Evaluations before firstStep keep their (unused) slots so that evaluation indices stay those of the whole
  // schedule; they are planned from 0, the ones from firstStep on from the fresh state.
  std::vector<Evaluation> all = firstStep == 0 ? evaluations : plan(0);
  if (firstStep != 0) {
    size_t keep = 0;
    while (keep < all.size() && all[keep].step < firstStep) ++keep;
    all.resize(keep);
    all.insert(all.end(), evaluations.begin(), evaluations.end());
  }
  coefficients_.clear();
  evaluationTimesteps_.clear();
  evaluationSteps_.clear();
  noise_.clear();
  for (const Evaluation& e : all) {
    if (static_cast<int>(e.next.size()) != registers_ + 1)
      throw Error("sampler " + std::string(samplerFlagName(kind())) + ": an evaluation updates " +
                  std::to_string(e.next.size()) + " tensors, not " + std::to_string(registers_ + 1));
    std::vector<double> c = {e.inputScale};
    for (const Combination& t : e.next) c.insert(c.end(), t.weights().begin(), t.weights().end());
    for (double v : c)
      if (!std::isfinite(v))
        throw Error("sampler " + std::string(samplerFlagName(kind())) + ": a non-finite weight at step " +
                    std::to_string(e.step) + " (timestep " + std::to_string(e.timestep) + ")");
    coefficients_.push_back(std::move(c));
    evaluationTimesteps_.push_back(e.timestep);
    evaluationSteps_.push_back(e.step);
    noise_.push_back(e.drawsNoise);
  }
}

}  // namespace sdgen::sampling
