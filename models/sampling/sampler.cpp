#include "models/sampling/sampler.h"

#include <string>

#include "engine/error.h"
#include "models/sampling/samplers.h"

namespace sdgen::sampling {

std::unique_ptr<Sampler> Sampler::create(const models::SchedulerConfig& config, const SamplerOptions& options,
                                         int steps, uint32_t firstUniformSlot) {
  if (options.karras && !samplerTakesKarras(options.kind))
    throw Error(std::string("sampler ") + samplerFlagName(options.kind) +
                " has no Karras-sigma variant (every sampler but ddim and lcm has one)");
  if (config.useExponentialSigmas && !samplerTakesExponential(options.kind))
    throw Error(std::string("sampler ") + samplerFlagName(options.kind) +
                " has no exponential-sigma schedule (euler, heun, dpm2, dpm2_a, lms, dpmpp_sde have one)");
  if (config.useExponentialSigmas && options.karras)
    throw Error("the Karras and exponential sigma schedules exclude each other");
  const TrainingSchedule training = trainingSchedule(config);  // validates the config
  switch (options.kind) {
    case SamplerKind::Ddim:
      return detail::makeDdimSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::Euler:
    case SamplerKind::EulerAncestral:
      return detail::makeEulerSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::DpmPP2M:
      return detail::makeDpmPP2MSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::Heun:
    case SamplerKind::Dpm2:
    case SamplerKind::Dpm2Ancestral:
      return detail::makeHeunDpm2Sampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::DpmPPSde:
      return detail::makeDpmPPSdeSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::DpmPP2MSde:
    case SamplerKind::DpmPP2SAncestral:
      return detail::makeDpmSolverSdeSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::Lms:
      return detail::makeLmsSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::UniPC:
      return detail::makeUniPCSampler(config, training, options, steps, firstUniformSlot);
    case SamplerKind::Lcm:
      return detail::makeLcmSampler(config, training, options, steps, firstUniformSlot);
  }
  throw Error("unknown sampler kind " + std::to_string(static_cast<int>(options.kind)));
}

void Sampler::checkStep(int step) const {
  if (step < 0 || step >= steps())
    throw Error("sampler " + std::string(samplerFlagName(kind())) + ": step " + std::to_string(step) +
                " is outside 0.." + std::to_string(steps() - 1));
}

void Sampler::checkEvaluation(int evaluation) const {
  if (evaluation < 0 || evaluation >= evaluations())
    throw Error("sampler " + std::string(samplerFlagName(kind())) + ": evaluation " + std::to_string(evaluation) +
                " is outside 0.." + std::to_string(evaluations() - 1));
}

int Sampler::evaluations() const {
  return evaluationSteps_.empty() ? steps() : static_cast<int>(evaluationSteps_.size());
}

int Sampler::firstEvaluation(int step) const {
  if (step == steps()) return evaluations();
  checkStep(step);
  if (evaluationSteps_.empty()) return step;
  for (size_t e = 0; e < evaluationSteps_.size(); ++e)
    if (evaluationSteps_[e] == step) return static_cast<int>(e);
  throw Error("sampler " + std::string(samplerFlagName(kind())) + ": step " + std::to_string(step) +
              " has no evaluation");
}

int Sampler::stepOfEvaluation(int evaluation) const {
  checkEvaluation(evaluation);
  return evaluationSteps_.empty() ? evaluation : evaluationSteps_[static_cast<size_t>(evaluation)];
}

float Sampler::evaluationTimestep(int evaluation) const {
  checkEvaluation(evaluation);
  return evaluationTimesteps_.empty() ? timesteps_[static_cast<size_t>(evaluation)]
                                      : evaluationTimesteps_[static_cast<size_t>(evaluation)];
}

const std::vector<double>& Sampler::evaluationCoefficients(int evaluation) const {
  checkEvaluation(evaluation);
  return coefficients_[static_cast<size_t>(evaluation)];
}

void Sampler::setEvaluationUniforms(int evaluation, const std::function<void(uint32_t slot, float value)>& set) const {
  const std::vector<double>& values = evaluationCoefficients(evaluation);
  for (size_t i = 0; i < values.size(); ++i) set(firstSlot_ + static_cast<uint32_t>(i), static_cast<float>(values[i]));
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

NoiseLevel Sampler::noisingAfter(int evaluation) const {
  checkEvaluation(evaluation);
  return noising(stepOfEvaluation(evaluation) + 1);
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
