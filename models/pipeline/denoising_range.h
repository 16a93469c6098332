#pragma once
// diffusers' base + refiner ensemble (docs/sdxl.md "Refiner"): the base pipeline runs with denoising_end and
// returns latents, the refiner's image-to-image pipeline continues them with denoising_start. Both cut the same
// schedule at one discrete timestep, counting the scheduler's timesteps list, which has one entry per UNet
// evaluation (order-2 schedulers: Heun, DPM2, DPM2 a, DPM++ SDE list 2N - 1):
//   cutoff = int(round(num_train_timesteps - fraction * num_train_timesteps))   (Python's round: half to even)
//   base     the first k evaluations, k = how many timesteps are >= cutoff (StableDiffusionXLPipeline "9.1
//            Apply denoising_end"); an order-2 sampler may stop after the first evaluation of a step
//   refiner  the last k evaluations, k = how many timesteps are < cutoff, plus one for an order-2 scheduler when
//            k is even (get_timesteps: never start between a step's two evaluations); set_begin_index(t_start),
//            and the latents are taken as they are (add_noise False)
// Every sampler splits (fixtures/refiner_sdxl, refiner_sde_sdxl): DPM++ SDE draws each part's noise from its own
// generator (docs/samplers.md), DPM++ 2S a's refiner lowers a second-order first step to first order (its plan from
// firstStep, as DPMSolverSinglestepScheduler without the outputs before the switch).
#include <optional>

#include "models/sampling/sampler.h"

namespace sdgen::pipeline {

// Throws sdgen::Error naming `what` unless 0 < fraction < 1 (diffusers' denoising_value_valid).
void checkDenoisingFraction(double fraction, const char* what);

// How many UNet evaluations the base runs with denoising_end = fraction (from the first). Throws when none would.
int evaluationsBeforeDenoisingEnd(const sampling::Sampler& sampler, double fraction, int numTrainTimesteps);

// The first evaluation the refiner runs with denoising_start = fraction: always a step's first. Throws when none
// would be left.
int firstEvaluationForDenoisingStart(const sampling::Sampler& sampler, double fraction, int numTrainTimesteps);

// What a generation runs: the evaluations [firstEvaluation, endEvaluation), the step the sampler begins at
// (Sampler::beginAt) and the steps reported to progress. firstEvaluation from denoisingStart, else the first of
// the step strength gives (image to image, firstStepForStrength), else 0; endEvaluation from denoisingEnd, else
// all. Throws when the range is empty.
struct DenoisingSteps {
  int firstStep = 0, firstEvaluation = 0, endEvaluation = 0;
  int stepsRun = 0;  // steps with at least one evaluation in the range
};
DenoisingSteps denoisingSteps(const sampling::Sampler& sampler, int numTrainTimesteps, std::optional<double> start,
                              std::optional<double> end, std::optional<float> strength);

}  // namespace sdgen::pipeline
