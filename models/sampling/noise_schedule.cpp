#include "models/sampling/exact_float.h"  // first: float32 tables must round as torch's do
#include "models/sampling/noise_schedule.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "engine/error.h"
#include "models/sampling/numpy_like.h"

namespace sdgen::sampling {

namespace {

void require(bool ok, const models::SchedulerConfig& config, const std::string& what) {
  if (!ok) throw Error(configName(config) + ": " + what);
}

bool oneOf(const std::string& v, std::initializer_list<std::string_view> accepted) {
  for (auto a : accepted)
    if (v == a) return true;
  return false;
}

}  // namespace

std::string configName(const models::SchedulerConfig& config) {
  return config.source.empty() ? std::string("the scheduler config") : "the scheduler config (" + config.source + ")";
}

double configDecimal(float value) {
  char text[64];
  auto written = std::to_chars(text, text + sizeof text, value);  // shortest round-trip form
  double parsed = value;
  std::from_chars(text, written.ptr, parsed);
  return parsed;
}

void validateSchedulerConfig(const models::SchedulerConfig& c) {
  require(oneOf(c.betaSchedule, {"linear", "scaled_linear"}), c,
          "beta_schedule '" + c.betaSchedule + "' is not supported (linear, scaled_linear)");
  require(oneOf(c.predictionType, {"epsilon", "v_prediction"}), c,
          "prediction_type '" + c.predictionType + "' is not supported (epsilon, v_prediction)");
  require(oneOf(c.timestepSpacing, {"leading", "trailing", "linspace"}), c,
          "timestep_spacing '" + c.timestepSpacing + "' is not supported (leading, trailing, linspace)");
  require(c.numTrainTimesteps >= 2, c,
          "num_train_timesteps " + std::to_string(c.numTrainTimesteps) + " must be at least 2");
  require(c.betaStart > 0 && c.betaStart < c.betaEnd && c.betaEnd < 1, c,
          "beta_start " + std::to_string(c.betaStart) + " and beta_end " + std::to_string(c.betaEnd) +
              " must satisfy 0 < beta_start < beta_end < 1");
  require(c.stepsOffset >= 0, c, "steps_offset " + std::to_string(c.stepsOffset) + " must not be negative");
}

TrainingSchedule trainingSchedule(const models::SchedulerConfig& config) {
  validateSchedulerConfig(config);
  const int n = config.numTrainTimesteps;
  const double start = configDecimal(config.betaStart), end = configDecimal(config.betaEnd);
  std::vector<float> betas;
  if (config.betaSchedule == "linear") {
    betas = numpy_like::torchLinspaceF32(start, end, n);
  } else {
    betas = numpy_like::torchLinspaceF32(std::sqrt(start), std::sqrt(end), n);
    for (float& b : betas) b = b * b;
  }
  TrainingSchedule s;
  s.alphasCumprod.resize(n);
  s.sigmas.resize(n);
  double product = 1.0;
  for (int t = 0; t < n; ++t) {
    const float alpha = 1.0f - betas[t];
    product *= static_cast<double>(alpha);
    const auto a = static_cast<float>(product);
    s.alphasCumprod[t] = a;
    s.sigmas[t] = std::sqrt((1.0f - a) / a);
  }
  return s;
}

}  // namespace sdgen::sampling
