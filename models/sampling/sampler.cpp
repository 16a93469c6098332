#include "models/sampling/sampler.h"

#include <string>

#include "engine/error.h"
#include "models/sampling/samplers.h"

namespace sdgen::sampling {

std::unique_ptr<Sampler> Sampler::create(const models::SchedulerConfig& config, const SamplerOptions& options,
                                         int steps, uint32_t firstUniformSlot) {
  if (options.karras && options.kind == SamplerKind::Ddim)
    throw Error("sampler ddim has no Karras-sigma variant (Karras sigmas: euler, euler_a, dpmpp_2m)");
  const TrainingSchedule training = trainingSchedule(config);  // validates the config
  switch (options.kind) {
    case SamplerKind::Ddim:
      return detail::makeDdimSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::Euler:
    case SamplerKind::EulerAncestral:
      return detail::makeEulerSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::DpmPP2M:
      return detail::makeDpmPP2MSampler(config, training, options, steps, firstUniformSlot);
  }
  throw Error("unknown sampler kind " + std::to_string(static_cast<int>(options.kind)));
}

void Sampler::checkStep(int step) const {
  if (step < 0 || step >= steps())
    throw Error("sampler " + std::string(samplerFlagName(kind())) + ": step " + std::to_string(step) +
                " is outside 0.." + std::to_string(steps() - 1));
}

float Sampler::timestep(int step) const {
  checkStep(step);
  return timesteps_[static_cast<size_t>(step)];
}

graph::Expr Sampler::nextHistory(const graph::Expr&, const graph::Expr&) const {
  throw Error("sampler " + std::string(samplerFlagName(kind())) + " keeps no history (needsHistory() is false)");
}

NoiseLevel Sampler::noising(int step) const {
  checkStep(step);
  return noising_.at(static_cast<size_t>(step));
}

const std::vector<double>& Sampler::stepCoefficients(int step) const {
  checkStep(step);
  return coefficients_[static_cast<size_t>(step)];
}

void Sampler::setStepUniforms(int step, const std::function<void(uint32_t slot, float value)>& set) const {
  const std::vector<double>& values = stepCoefficients(step);
  for (size_t i = 0; i < values.size(); ++i) set(firstSlot_ + static_cast<uint32_t>(i), static_cast<float>(values[i]));
}

void Sampler::requireOperand(const graph::Expr& latents, const graph::Expr& operand, const char* name,
                             const char* sampler) {
  if (!operand) throw Error(std::string("sampler ") + sampler + " needs the " + name + " operand");
  if (operand.shape() != latents.shape())
    throw Error(std::string("sampler ") + sampler + ": " + name + " has shape " + graph::shapeString(operand.shape()) +
                ", the latents " + graph::shapeString(latents.shape()));
}

}  // namespace sdgen::sampling
