#include "models/sampling/exact_float.h"  // first: float32 values must round as diffusers' do
#include "models/sampling/step_schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"
#include "models/sampling/numpy_like.h"

namespace sdgen::sampling {

namespace {

using numpy_like::roundHalfEven;

void checkSteps(const models::SchedulerConfig& config, int steps, const char* sampler) {
  if (steps < 1 || steps > config.numTrainTimesteps)
    throw Error(std::string(sampler) + ": steps " + std::to_string(steps) + " must be between 1 and " +
                "num_train_timesteps (" + std::to_string(config.numTrainTimesteps) + ") of " + configName(config));
}

void checkTimesteps(const models::SchedulerConfig& config, const std::vector<double>& timesteps, int steps,
                    const char* sampler) {
  for (double t : timesteps)
    if (!(t >= 0 && t <= config.numTrainTimesteps - 1))
      throw Error(std::string(sampler) + ": " + std::to_string(steps) + " steps with timestep_spacing '" +
                  config.timestepSpacing + "' and steps_offset " + std::to_string(config.stepsOffset) +
                  " give timestep " + std::to_string(t) + ", outside the training range 0.." +
                  std::to_string(config.numTrainTimesteps - 1) + " of " + configName(config));
}

// (arange(0, count) * ratio).round()[::-1]: "leading" spacing before steps_offset is added.
std::vector<double> leadingDescending(int count, int ratio) {
  std::vector<double> t;
  for (int i = count - 1; i >= 0; --i) t.push_back(static_cast<double>(i) * ratio);
  return t;
}

// np.arange(last, 0, -N / steps).round() - 1: "trailing" spacing.
std::vector<double> trailing(int last, int numTrain, int steps) {
  const double ratio = static_cast<double>(numTrain) / steps;
  std::vector<double> t = numpy_like::arange(last, 0, -ratio);
  for (double& v : t) v = roundHalfEven(v) - 1;
  return t;
}

std::vector<double> toDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

std::vector<float> logOf(const std::vector<float>& v) {
  std::vector<float> out;
  out.reserve(v.size());
  for (float x : v) out.push_back(static_cast<float>(std::log(static_cast<double>(x))));
  return out;
}

std::vector<float> toFloatWithFinalZero(const std::vector<double>& sigmas) {
  std::vector<float> out(sigmas.begin(), sigmas.end());
  out.push_back(0.0f);
  return out;
}

}  // namespace

std::vector<double> karrasSigmas(double sigmaMin, double sigmaMax, int steps) {
  constexpr double rho = 7.0;
  const double minInvRho = std::pow(sigmaMin, 1 / rho), maxInvRho = std::pow(sigmaMax, 1 / rho);
  std::vector<double> sigmas;
  for (double r : numpy_like::linspace(0, 1, steps)) sigmas.push_back(std::pow(maxInvRho + r * (minInvRho - maxInvRho), rho));
  return sigmas;
}

double sigmaToTimestep(double sigma, const std::vector<float>& logSigmas) {
  const double logSigma = std::log(std::max(sigma, 1e-10));
  // The last table entry not above log(sigma) (0 when there is none), at most the second to last.
  size_t low = 0;
  for (size_t i = 0; i < logSigmas.size(); ++i)
    if (logSigma - static_cast<double>(logSigmas[i]) >= 0) low = i;
  low = std::min(low, logSigmas.size() - 2);
  const double lo = logSigmas[low], hi = logSigmas[low + 1];
  const double w = std::clamp((lo - logSigma) / (lo - hi), 0.0, 1.0);
  return (1 - w) * static_cast<double>(low) + w * static_cast<double>(low + 1);
}

StepSchedule ddimSchedule(const models::SchedulerConfig& config, const TrainingSchedule& training, int steps) {
  checkSteps(config, steps, "DDIM");
  const int n = config.numTrainTimesteps;
  std::vector<double> t;
  if (config.timestepSpacing == "linspace") {
    for (double v : numpy_like::linspace(0, n - 1, steps)) t.insert(t.begin(), roundHalfEven(v));
  } else if (config.timestepSpacing == "leading") {
    t = leadingDescending(steps, n / steps);
    for (double& v : t) v += config.stepsOffset;
  } else {
    t = trailing(n, n, steps);
  }
  checkTimesteps(config, t, steps, "DDIM");
  StepSchedule s;
  s.timesteps.assign(t.begin(), t.end());
  (void)training;
  return s;
}

std::vector<double> exponentialSigmas(double sigmaMin, double sigmaMax, int steps) {
  std::vector<double> sigmas;
  for (double v : numpy_like::linspace(std::log(sigmaMax), std::log(sigmaMin), steps)) sigmas.push_back(std::exp(v));
  return sigmas;
}

StepSchedule interpolatedSigmaSchedule(const models::SchedulerConfig& config, const TrainingSchedule& training,
                                       int steps, const SigmaScheduleOptions& options) {
  checkSteps(config, steps, options.sampler);
  const int n = config.numTrainTimesteps;
  std::vector<double> t;
  if (config.timestepSpacing == "linspace") {
    for (double v : numpy_like::linspace(0, n - 1, steps))
      t.insert(t.begin(), options.float32Linspace ? static_cast<float>(v) : v);
  } else if (config.timestepSpacing == "leading") {
    t = leadingDescending(steps, n / steps);
    for (double& v : t) v += config.stepsOffset;
  } else {
    t = trailing(n, n, steps);
  }
  checkTimesteps(config, t, steps, options.sampler);

  const std::vector<double> table = toDouble(training.sigmas);
  std::vector<double> sigmas;
  for (double v : t) sigmas.push_back(numpy_like::interpUnitGrid(v, table));
  if (options.karras || options.exponential) {
    const double lo = config.sigmaMin.value_or(sigmas.back()), hi = config.sigmaMax.value_or(sigmas.front());
    const int count = static_cast<int>(sigmas.size());
    sigmas = options.karras ? karrasSigmas(lo, hi, count) : exponentialSigmas(lo, hi, count);
    const std::vector<float> logSigmas = logOf(training.sigmas);
    for (size_t i = 0; i < sigmas.size(); ++i) {
      t[i] = sigmaToTimestep(sigmas[i], logSigmas);
      if (options.karras && options.roundRemappedTimesteps) t[i] = roundHalfEven(t[i]);
    }
  }

  StepSchedule s;
  for (double v : t) s.timesteps.push_back(static_cast<float>(v));
  s.sigmas = toFloatWithFinalZero(sigmas);
  // init_noise_sigma: the largest sigma, or sqrt(max^2 + 1) with "leading" spacing (float32 tensor math).
  const float maxSigma = *std::max_element(s.sigmas.begin(), s.sigmas.end());
  s.initNoiseSigma = config.timestepSpacing == "leading" ? std::sqrt(maxSigma * maxSigma + 1.0f) : maxSigma;
  return s;
}

StepSchedule eulerSchedule(const models::SchedulerConfig& config, const TrainingSchedule& training, int steps,
                           bool karras) {
  return interpolatedSigmaSchedule(config, training, steps,
                                   {.karras = karras, .exponential = !karras && config.useExponentialSigmas});
}

StepSchedule dpmSolverSchedule(const models::SchedulerConfig& config, const TrainingSchedule& training, int steps,
                               bool karras) {
  checkSteps(config, steps, "DPM++ 2M");
  const int n = config.numTrainTimesteps;
  const int last = n;  // lambda_min_clipped = -inf clips nothing
  std::vector<double> t;
  if (config.timestepSpacing == "linspace") {
    // steps + 1 points, the last one (timestep 0) dropped
    std::vector<double> points = numpy_like::linspace(0, last - 1, steps + 1);
    for (size_t i = points.size() - 1; i >= 1; --i) t.push_back(roundHalfEven(points[i]));
  } else if (config.timestepSpacing == "leading") {
    const int ratio = last / (steps + 1);
    if (ratio < 1)
      throw Error("DPM++ 2M: steps " + std::to_string(steps) + " with timestep_spacing 'leading' must be below " +
                  std::to_string(last) + " (num_train_timesteps - 1) of " + configName(config));
    t = leadingDescending(steps + 1, ratio);
    t.pop_back();
    for (double& v : t) v += config.stepsOffset;
  } else {
    t = trailing(last, n, steps);
  }
  checkTimesteps(config, t, steps, "DPM++ 2M");

  std::vector<double> sigmas;
  if (karras) {
    // Over the whole training range (unlike Euler's, which spans the spaced timesteps), timesteps rounded.
    sigmas = karrasSigmas(config.sigmaMin.value_or(training.sigmas.front()),
                          config.sigmaMax.value_or(training.sigmas.back()), static_cast<int>(t.size()));
    const std::vector<float> logSigmas = logOf(training.sigmas);
    for (size_t i = 0; i < sigmas.size(); ++i) t[i] = roundHalfEven(sigmaToTimestep(sigmas[i], logSigmas));
  } else {
    for (double v : t) sigmas.push_back(training.sigmas[static_cast<size_t>(v)]);
  }

  StepSchedule s;
  for (double v : t) s.timesteps.push_back(static_cast<float>(v));
  s.sigmas = toFloatWithFinalZero(sigmas);
  s.initNoiseSigma = 1.0f;
  return s;
}

}  // namespace sdgen::sampling
