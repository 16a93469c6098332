#pragma once
// The training noise schedule of a Stable Diffusion scheduler config, computed as diffusers computes it: betas
// by torch.linspace in float32 (of sqrt(beta) for "scaled_linear", then squared), alphas = 1 - betas in
// float32, their cumulative product accumulated in double and stored as float32 (torch's CPU cumprod), and
// the Karras-style noise levels sigma = sqrt((1 - alpha_bar) / alpha_bar) in float32. Keeping diffusers'
// float32 roundings here matters: the smallest sigmas are differences of numbers close to 1.
#include <string>
#include <vector>

#include "models/config/model_config.h"

namespace sdgen::sampling {

struct TrainingSchedule {
  std::vector<float> alphasCumprod;  // [numTrainTimesteps], indexed by timestep
  std::vector<float> sigmas;         // [numTrainTimesteps], sqrt((1 - a) / a) per timestep, increasing
};

// Checks the fields the samplers read and throws sdgen::Error naming the field, its value and what is
// accepted: beta_schedule (linear | scaled_linear), prediction_type (epsilon | v_prediction), timestep_spacing
// (leading | trailing | linspace), num_train_timesteps (>= 2), beta_start/beta_end (0 < start < end < 1),
// steps_offset (>= 0).
void validateSchedulerConfig(const models::SchedulerConfig& config);

TrainingSchedule trainingSchedule(const models::SchedulerConfig& config);

// The decimal a config file wrote, recovered from the float it was parsed into (the shortest decimal that
// rounds to it; 0.00085f -> 0.00085), since diffusers computes with the Python float (a double).
double configDecimal(float value);
inline double configDecimal(double value) { return value; }

// "the scheduler config (SOURCE)" or "the scheduler config", for messages.
std::string configName(const models::SchedulerConfig& config);

}  // namespace sdgen::sampling
