#pragma once
// A sampler for one generation: the schedule (host, computed once) and the per-step latent update as fusion
// expressions whose step-dependent scalars are uniform slots, so the pipeline records ONE denoising step and
// replays it with new uniforms (setStepUniforms) — no re-recording per step.
//
// One step, as the pipeline records it (latents L, model output E = the guided UNet prediction):
//   UNet input   modelInput(L)                      (the pipeline sets the timestep uniform to timestep(step))
//   needsNoise() the caller fills a noise tensor with TorchCpuGenerator::randn(latent element count) before
//                each replay (ancestral sampling; diffusers draws it after the UNet call, from the same generator
//                that drew the initial latents)
//   update       needsHistory() false: store nextLatents(L, E, noise, {}) into L (in place is safe: every
//                element reads only its own position).
//                needsHistory() true (DPM++ 2M), history H (zero before the first replay):
//                  1. store nextLatents(L, E, {}, H) into a scratch tensor S (it reads the old L and H),
//                  2. store nextHistory(L, E) into H            (it reads the old L, hence after 1 and before 3),
//                  3. store S into L.
//                recordLatentUpdate (step_recorder.h) records exactly this.
// Before the first step: L = randn(latent shape) * initNoiseSigma().
//
// Multi-evaluation samplers (Heun, DPM2, DPM2 a, DPM++ SDE: diffusers' order-2 schedulers, whose timesteps list
// one entry per UNet evaluation) and the other LinearSampler kinds (linear_sampler.h) replay the recorded step
// once per EVALUATION: evaluations() in all, with evaluationTimestep(e), setEvaluationUniforms(e) and, where
// drawsNoise(e), fresh noise. Single-evaluation samplers have evaluation i = step i.
//
// Image to image starts later (diffusers' get_timesteps + set_begin_index): beginAt(t) before the first step
// makes step t the first one run (DPM++ 2M: first order, as diffusers' scheduler has no history yet), and the
// initial latents are noising(t).signal * image latents + noising(t).noise * noise (the scheduler's add_noise).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "graph/expr.h"
#include "models/config/model_config.h"
#include "models/sampling/sampler_kind.h"

namespace sdgen::sampling {

// add_noise(x, n, step) = signal * x + noise * n: DDIM sqrt(abar_t), sqrt(1 - abar_t); Euler / Euler a 1, sigma;
// DPM++ 1 / sqrt(sigma^2 + 1), sigma / sqrt(sigma^2 + 1).
struct NoiseLevel {
  double signal = 1, noise = 0;
};

struct SamplerOptions {
  SamplerKind kind = SamplerKind::EulerAncestral;
  bool karras = false;  // Karras sigmas (Euler, Euler a, DPM++ 2M); DDIM refuses it
};

class Sampler {
 public:
  // Validates the config (unsupported values -> sdgen::Error naming the field and the value) and computes the
  // schedule for `steps` steps. Uniform slots [firstUniformSlot, firstUniformSlot + uniformCount()) are the
  // sampler's.
  static std::unique_ptr<Sampler> create(const models::SchedulerConfig& config, const SamplerOptions& options,
                                         int steps, uint32_t firstUniformSlot);
  virtual ~Sampler() = default;

  SamplerKind kind() const { return options_.kind; }
  bool karras() const { return options_.karras; }
  int steps() const { return static_cast<int>(timesteps_.size()); }
  float initNoiseSigma() const { return initNoiseSigma_; }
  float timestep(int step) const;                           // what the UNet is given at `step` (0-based)
  const std::vector<float>& timesteps() const { return timesteps_; }
  const std::vector<float>& sigmas() const { return sigmas_; }  // steps + 1 values ending in 0; DDIM: empty

  virtual bool needsNoise() const { return false; }
  virtual bool needsHistory() const { return false; }

  // UNet evaluations: evaluations() in all; step `s` runs evaluations firstEvaluation(s) .. firstEvaluation(s+1)-1.
  int evaluations() const;
  int firstEvaluation(int step) const;
  int stepOfEvaluation(int evaluation) const;
  float evaluationTimestep(int evaluation) const;
  // Whether the caller draws fresh noise (TorchCpuGenerator::randn) before replaying `evaluation`.
  virtual bool drawsNoise(int /*evaluation*/) const { return needsNoise(); }
  void setEvaluationUniforms(int evaluation, const std::function<void(uint32_t slot, float value)>& set) const;
  const std::vector<double>& evaluationCoefficients(int evaluation) const;
  uint32_t firstUniformSlot() const { return firstSlot_; }
  uint32_t uniformCount() const { return static_cast<uint32_t>(coefficients_.empty() ? 0 : coefficients_[0].size()); }

  // scale_model_input. Default: the latents themselves.
  virtual graph::Expr modelInput(const graph::Expr& latents) const { return latents; }
  // The latents after the step. `noise` is read only when needsNoise(), `history` only when needsHistory()
  // (pass an empty Expr otherwise); each must then have the latents' shape.
  virtual graph::Expr nextLatents(const graph::Expr& latents, const graph::Expr& modelOutput,
                                  const graph::Expr& noise, const graph::Expr& history) const = 0;
  // needsHistory(): what `history` must hold at the next step (the denoised estimate), from the OLD latents.
  virtual graph::Expr nextHistory(const graph::Expr& latents, const graph::Expr& modelOutput) const;

  // diffusers' scheduler.add_noise at `step` (0-based, of steps()).
  NoiseLevel noising(int step) const;
  // add_noise after evaluation `evaluation` has run and before the next (the inpainting blend): the scheduler's
  // sigma at its next step_index. Single-evaluation samplers: noising(step + 1). Not after the last evaluation.
  virtual NoiseLevel noisingAfter(int evaluation) const;
  // The generation starts at `step` instead of 0 (call once, before the first step is recorded or run).
  virtual void beginAt(int step) { checkStep(step); }

  // Calls set(slot, value) for every uniform of the sampler with the values of `step`.
  void setStepUniforms(int step, const std::function<void(uint32_t slot, float value)>& set) const;
  // The same values, in double, by index (for tests and diagnostics).
  const std::vector<double>& stepCoefficients(int step) const;

 protected:
  Sampler(const SamplerOptions& options, uint32_t firstUniformSlot) : options_(options), firstSlot_(firstUniformSlot) {}
  graph::Expr coefficient(uint32_t index) const { return graph::uniform(firstSlot_ + index); }
  void checkStep(int step) const;
  void checkEvaluation(int evaluation) const;
  // The latents-shaped operands a sampler needs must be present and match.
  static void requireOperand(const graph::Expr& latents, const graph::Expr& operand, const char* name,
                             const char* sampler);

  SamplerOptions options_;
  uint32_t firstSlot_ = 0;
  std::vector<float> timesteps_, sigmas_;
  float initNoiseSigma_ = 1.0f;
  std::vector<std::vector<double>> coefficients_;  // [evaluation][uniform index]
  // Multi-evaluation samplers: per evaluation, the timestep and the step it belongs to (empty: one per step).
  std::vector<float> evaluationTimesteps_;
  std::vector<int> evaluationSteps_;
  std::vector<NoiseLevel> noising_;                 // [step]
};

}  // namespace sdgen::sampling
