#pragma once
// The timesteps and noise levels a sampler steps through for a number of inference steps, as diffusers 0.42's
// set_timesteps computes them for DDIMScheduler, EulerDiscreteScheduler / EulerAncestralDiscreteScheduler
// and DPMSolverMultistepScheduler (timestep_spacing leading | trailing | linspace, steps_offset for leading,
// optional Karras sigmas, between the config's sigma_min and sigma_max where it sets them). Host math in double;
// the values diffusers keeps as float32 tensors (timesteps, sigmas) are rounded to float32 at the same points.
#include <vector>

#include "models/config/model_config.h"
#include "models/sampling/noise_schedule.h"

namespace sdgen::sampling {

struct StepSchedule {
  std::vector<float> timesteps;  // per step: what the UNet is given (integers except Euler with Karras sigmas)
  std::vector<float> sigmas;     // sigma-based samplers: steps + 1 noise levels ending in 0; DDIM: empty
  float initNoiseSigma = 1.0f;   // the initial latents are randn * initNoiseSigma
};

// Every function validates `steps` (1..num_train_timesteps, and that the spacing gives timesteps inside the
// training range) and throws sdgen::Error naming the value.
StepSchedule ddimSchedule(const models::SchedulerConfig& config, const TrainingSchedule& training, int steps);
StepSchedule eulerSchedule(const models::SchedulerConfig& config, const TrainingSchedule& training, int steps,
                           bool karras);
// The interpolated-sigma schedule of the k-diffusion schedulers (Euler, Heun, KDPM2, KDPM2 ancestral, LMS,
// DPMSolverSDE): timesteps by spacing, sigmas np.interp'ed from the training table at them, optionally remapped
// to Karras or exponential sigmas between the config's sigma_min/sigma_max (default: the ends of that list) with
// timesteps from _sigma_to_t; init_noise_sigma the largest sigma (sqrt(max^2 + 1) with "leading" spacing).
struct SigmaScheduleOptions {
  bool karras = false, exponential = false;
  bool roundRemappedTimesteps = false;  // KDPM2's: np.array([_sigma_to_t(...)]).round() for Karras
  bool float32Linspace = true;          // np.linspace(..., dtype=np.float32); DPMSolverSDE's is float64
  const char* sampler = "Euler";        // for messages
};
StepSchedule interpolatedSigmaSchedule(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                       int steps, const SigmaScheduleOptions& options);
// exp(linspace(log(max), log(min), steps)) (diffusers' _convert_to_exponential).
std::vector<double> exponentialSigmas(double sigmaMin, double sigmaMax, int steps);

StepSchedule dpmSolverSchedule(const models::SchedulerConfig& config, const TrainingSchedule& training, int steps,
                               bool karras);

// Karras et al. (2022) noise levels, rho = 7: (max^(1/7) + ramp * (min^(1/7) - max^(1/7)))^7, ramp 0..1.
std::vector<double> karrasSigmas(double sigmaMin, double sigmaMax, int steps);
// The fractional timestep whose log-sigma, linearly interpolated in the training table, equals log(sigma)
// (diffusers' _sigma_to_t). logSigmas: log of the training sigmas, in float32 as diffusers takes them.
double sigmaToTimestep(double sigma, const std::vector<float>& logSigmas);

}  // namespace sdgen::sampling
