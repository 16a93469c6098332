#pragma once
// The samplers whose every UNet evaluation updates their state linearly (Heun, DPM2, DPM2 a, DPM++ SDE,
// DPM++ 2M SDE, DPM++ 2S a, LMS, UniPC, LCM). Their state is the latents L (what the UNet sees at the next
// evaluation) and K saved tensors R_1..R_K (the "registers": a stored sample, past denoised estimates or
// derivatives); after an evaluation with model output E (and, where drawsNoise(e), noise N), each of L, R_1..R_K
// is replaced by a linear combination of the operands {L, E, N, R_1..R_K} with weights the host computed for
// that evaluation (in double, from the diffusers step() being matched). The weights are uniforms, so one
// recorded update serves every evaluation: the schedule decides everything on the host.
//
// Uniform layout: c[0] = the model-input scale (UNet input = L * c[0]); then, for target t (0 = L, k = R_k) and
// operand o (0 = L, 1 = E, 2 = N, 2 + k = R_k), c[1 + t * (K + 3) + o].
// The registers must hold finite values (zeros) before the first evaluation, the noise tensor too.
#include <vector>

#include "models/sampling/sampler.h"

namespace sdgen::sampling {

// A linear combination of the operands (weights by operand index; see above).
class Combination {
 public:
  explicit Combination(int registers = 0) : w_(size_t(registers) + 3, 0.0) {}
  static Combination latents(int registers) { return unit(registers, 0); }
  static Combination modelOutput(int registers) { return unit(registers, 1); }
  static Combination noise(int registers) { return unit(registers, 2); }
  static Combination reg(int registers, int k) { return unit(registers, 2 + k); }  // k = 1..K

  Combination operator+(const Combination& o) const;
  Combination operator-(const Combination& o) const;
  Combination operator*(double s) const;
  friend Combination operator*(double s, const Combination& c) { return c * s; }
  const std::vector<double>& weights() const { return w_; }

 private:
  static Combination unit(int registers, int index) {
    Combination c(registers);
    c.w_[size_t(index)] = 1.0;
    return c;
  }
  std::vector<double> w_;
};

// What one UNet evaluation does.
struct Evaluation {
  int step = 0;              // the step (0-based) the evaluation belongs to
  float timestep = 0;        // what the UNet is given
  double inputScale = 1.0;   // scale_model_input: L * inputScale
  bool drawsNoise = false;   // fresh noise before the update (diffusers draws it inside step(), after the UNet)
  std::vector<Combination> next;  // [K + 1]: the new L, R_1..R_K
};

class LinearSampler : public Sampler {
 public:
  int registerCount() const { return registers_; }
  bool needsNoise() const override { return usesNoise_; }
  bool drawsNoise(int evaluation) const override;
  graph::Expr modelInput(const graph::Expr& latents) const override;
  // K == 0 (LCM) only; use nextValue otherwise.
  graph::Expr nextLatents(const graph::Expr& latents, const graph::Expr& modelOutput, const graph::Expr& noise,
                          const graph::Expr& history) const override;
  // The new value of target t (0 = latents, k = register k) from the operands; `noise` is read only when
  // needsNoise(), `registers` must hold K tensors shaped like the latents.
  graph::Expr nextValue(int target, const graph::Expr& latents, const graph::Expr& modelOutput,
                        const graph::Expr& noise, const std::vector<graph::Expr>& registers) const;
  void beginAt(int step) override;
  // The 2N - 1 samplers (Heun, DPM2, DPM2 a, DPM++ SDE): diffusers' add_noise takes its interleaved sigmas at the
  // next step_index, [s0, s1, s1, s2, s2, ...][e + 1] = s_{(e + 2) / 2} (the step's sigma, not the midpoint's).
  NoiseLevel noisingAfter(int evaluation) const override;

 protected:
  LinearSampler(const SamplerOptions& options, uint32_t firstUniformSlot, int registers, bool usesNoise)
      : Sampler(options, firstUniformSlot), registers_(registers), usesNoise_(usesNoise) {}
  // The evaluations of a generation that starts at `firstStep` (diffusers' set_begin_index: the scheduler's
  // state is fresh there). Called with 0 by finish() and again by beginAt.
  virtual std::vector<Evaluation> plan(int firstStep) const = 0;
  // Call at the end of the subclass constructor, once timesteps_/sigmas_/noising_ are set.
  void finish() { install(plan(0), 0); }
  Combination L() const { return Combination::latents(registers_); }
  Combination E() const { return Combination::modelOutput(registers_); }
  Combination N() const { return Combination::noise(registers_); }
  Combination R(int k) const { return Combination::reg(registers_, k); }

 private:
  void install(const std::vector<Evaluation>& evaluations, int firstStep);

  int registers_;
  bool usesNoise_;
  std::vector<bool> noise_;  // per evaluation
};

// The denoised estimate x0 from the latents and the model output at noise level sigma, with the model input
// x / sqrt(sigma^2 + 1) (the k-diffusion samplers' pred_original_sample): epsilon x - sigma e; v-prediction
// x / (sigma^2 + 1) - e sigma / sqrt(sigma^2 + 1).
Combination kDenoised(const Combination& x, const Combination& e, double sigma, bool vPrediction);
// The same for the VP samplers (DPM-Solver, UniPC): alpha_t = 1 / sqrt(sigma^2 + 1), sigma_t = sigma alpha_t;
// epsilon (x - sigma_t e) / alpha_t, v-prediction alpha_t x - sigma_t e.
Combination vpDenoised(const Combination& x, const Combination& e, double sigma, bool vPrediction);

}  // namespace sdgen::sampling
