#include "models/pipeline/denoising_range.h"

#include <cmath>
#include <sstream>

#include "engine/error.h"
#include "models/pipeline/image_inputs.h"

namespace sdgen::pipeline {

namespace {

std::string decimal(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// diffusers: int(round(num_train_timesteps - fraction * num_train_timesteps)); std::nearbyint rounds half to
// even in the default rounding mode, as Python's round does.
double discreteCutoff(double fraction, int numTrainTimesteps) {
  return std::nearbyint(double(numTrainTimesteps) - fraction * double(numTrainTimesteps));
}

// diffusers' scheduler.order == 2 among the others: Heun, KDPM2, KDPM2 ancestral, DPM++ SDE (DPMSolverSDEScheduler;
// DPMSolverSinglestepScheduler's order is 1).
bool secondOrder(const sampling::Sampler& sampler) {
  const sampling::SamplerKind k = sampler.kind();
  return k == sampling::SamplerKind::Heun || k == sampling::SamplerKind::Dpm2 ||
         k == sampling::SamplerKind::Dpm2Ancestral || k == sampling::SamplerKind::DpmPPSde;
}

// How many of the evaluation timesteps `below` the cutoff (true) or at and above it (false).
int countTimesteps(const sampling::Sampler& sampler, double cutoff, bool below) {
  int count = 0;
  for (int e = 0; e < sampler.evaluations(); ++e)
    count += (double(sampler.evaluationTimestep(e)) < cutoff) == below ? 1 : 0;
  return count;
}

}  // namespace

void checkDenoisingFraction(double fraction, const char* what) {
  if (!(fraction > 0.0 && fraction < 1.0))
    throw Error(std::string(what) + " must be between 0 and 1 (exclusive), got " + decimal(fraction));
}

int evaluationsBeforeDenoisingEnd(const sampling::Sampler& sampler, double fraction, int numTrainTimesteps) {
  checkDenoisingFraction(fraction, "denoising end");
  const double cutoff = discreteCutoff(fraction, numTrainTimesteps);
  const int count = countTimesteps(sampler, cutoff, false);
  if (count == 0)
    throw Error("denoising end " + decimal(fraction) + " leaves the base model no step of " +
                std::to_string(sampler.steps()) + " (the first timestep is below " + decimal(cutoff) +
                "); use more steps or a later switch");
  return count;
}

int firstEvaluationForDenoisingStart(const sampling::Sampler& sampler, double fraction, int numTrainTimesteps) {
  checkDenoisingFraction(fraction, "denoising start");
  const double cutoff = discreteCutoff(fraction, numTrainTimesteps);
  int count = countTimesteps(sampler, cutoff, true);
  // diffusers: `if self.scheduler.order == 2 and num_inference_steps % 2 == 0: num_inference_steps += 1`.
  if (secondOrder(sampler) && count % 2 == 0) ++count;
  if (count == 0 || count > sampler.evaluations())
    throw Error("denoising start " + decimal(fraction) + " leaves the refiner no step of " +
                std::to_string(sampler.steps()) + " (no timestep below " + decimal(cutoff) +
                "); use more steps or an earlier switch");
  const int first = sampler.evaluations() - count;
  if (sampler.firstEvaluation(sampler.stepOfEvaluation(first)) != first)
    throw Error("denoising start " + decimal(fraction) + " falls between the two evaluations of a " +
                sampling::samplerFlagName(sampler.kind()) + " step, which sdgen cannot start from");
  return first;
}

DenoisingSteps denoisingSteps(const sampling::Sampler& sampler, int numTrainTimesteps, std::optional<double> start,
                              std::optional<double> end, std::optional<float> strength) {
  DenoisingSteps r;
  if (start) {
    r.firstEvaluation = firstEvaluationForDenoisingStart(sampler, *start, numTrainTimesteps);
    r.firstStep = sampler.stepOfEvaluation(r.firstEvaluation);
  } else {
    r.firstStep = strength ? firstStepForStrength(sampler.steps(), *strength) : 0;
    r.firstEvaluation = sampler.firstEvaluation(r.firstStep);
  }
  r.endEvaluation = end ? evaluationsBeforeDenoisingEnd(sampler, *end, numTrainTimesteps) : sampler.evaluations();
  if (r.endEvaluation <= r.firstEvaluation)
    throw Error("denoising start and end leave no step to run (start at evaluation " +
                std::to_string(r.firstEvaluation) + ", end before evaluation " + std::to_string(r.endEvaluation) + ")");
  r.stepsRun = sampler.stepOfEvaluation(r.endEvaluation - 1) - r.firstStep + 1;
  return r;
}

}  // namespace sdgen::pipeline
