#pragma once
// The concrete samplers behind Sampler::create (internal to models/sampling).
#include <memory>

#include "models/sampling/noise_schedule.h"
#include "models/sampling/sampler.h"

namespace sdgen::sampling::detail {

std::unique_ptr<Sampler> makeDdimSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                         const SamplerOptions& options, int steps, uint32_t firstUniformSlot);
// Euler and Euler ancestral (options.kind decides).
std::unique_ptr<Sampler> makeEulerSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                          const SamplerOptions& options, int steps, uint32_t firstUniformSlot);
std::unique_ptr<Sampler> makeDpmPP2MSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                            const SamplerOptions& options, int steps, uint32_t firstUniformSlot);

// Heun, DPM2 and DPM2 a (options.kind decides).
std::unique_ptr<Sampler> makeHeunDpm2Sampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                             const SamplerOptions& options, int steps, uint32_t firstUniformSlot);
std::unique_ptr<Sampler> makeDpmPPSdeSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                             const SamplerOptions& options, int steps, uint32_t firstUniformSlot);
// DPM++ 2M SDE and DPM++ 2S a (options.kind decides).
std::unique_ptr<Sampler> makeDpmSolverSdeSampler(const models::SchedulerConfig& config,
                                                 const TrainingSchedule& training, const SamplerOptions& options,
                                                 int steps, uint32_t firstUniformSlot);
std::unique_ptr<Sampler> makeLmsSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                        const SamplerOptions& options, int steps, uint32_t firstUniformSlot);
std::unique_ptr<Sampler> makeUniPCSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                          const SamplerOptions& options, int steps, uint32_t firstUniformSlot);
std::unique_ptr<Sampler> makeLcmSampler(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                        const SamplerOptions& options, int steps, uint32_t firstUniformSlot);

}  // namespace sdgen::sampling::detail
