#pragma once
// Shared by the tests of the LinearSampler kinds (heun, dpm2, dpm2_a, dpmpp_2s_a, dpmpp_sde, dpmpp_2m_sde, lms,
// unipc, lcm): the diffusers fixture tests/data/fixtures/samplers.{json,safetensors} (tests/reference/
// sampler_fixtures.py) and the fixture's fake-model loop replayed on the host in float64 from a sampler's
// per-evaluation weights (the GPU replays the same weights through the recorded update).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/sampling/linear_sampler.h"
#include "models/sampling/torch_generator.h"
#include "tests/models/models_test_util.h"
#include "tests/models/sampling_test_util.h"

namespace sdgen::sampling::test {

inline std::string linearFixtureJson() { return sdgen::test::sourcePath("tests/data/fixtures/samplers.json"); }
inline std::string linearFixtureTensors() {
  return sdgen::test::sourcePath("tests/data/fixtures/samplers.safetensors");
}

// The fixture's runs; fails the calling test when the files are missing (they are written by
// scripts/device/make-fixtures.sh --only samplers).
inline nlohmann::json loadLinearFixture() {
  const bool present =
      std::filesystem::exists(linearFixtureJson()) && std::filesystem::exists(linearFixtureTensors());
  EXPECT_TRUE(present) << linearFixtureJson() << " / .safetensors missing: written by tests/reference/"
                       << "make_fixtures.py --only samplers (scripts/device/make-fixtures.sh)";
  if (!present) return nlohmann::json::array();
  return nlohmann::json::parse(std::ifstream(linearFixtureJson())).at("runs");
}

// A fixture sampler name ("heun", "dpm2_a_karras", "lms_exp", ...) as options plus the config switch.
struct NamedSampler {
  SamplerOptions options;
  bool exponential = false;
};
inline NamedSampler samplerFromName(std::string name) {
  NamedSampler s;
  if (name.ends_with("_karras")) {
    s.options.karras = true;
    name.resize(name.size() - 7);
  } else if (name.ends_with("_exp")) {
    s.exponential = true;
    name.resize(name.size() - 4);
  }
  s.options.kind = *parseSamplerKind(name);
  return s;
}

// The diffusers config of a run as sdgen reads it (sampling_test_util.h's fields plus the new samplers').
inline models::SchedulerConfig linearConfigFromJson(const nlohmann::json& j, bool exponential) {
  models::SchedulerConfig c = configFromJson(j);
  c.useExponentialSigmas = exponential;
  if (j.contains("solver_order") && j.at("solver_order").is_number_integer()) c.solverOrder = j.at("solver_order");
  if (j.contains("solver_type") && j.at("solver_type").is_string()) c.solverType = j.at("solver_type");
  if (j.contains("original_inference_steps")) c.originalInferenceSteps = j.at("original_inference_steps");
  if (j.contains("timestep_scaling")) c.timestepScaling = j.at("timestep_scaling");
  return c;
}

// The fake-model loop in float64 over a sampler's evaluations: out = 0.3 * in + 0.05 cos(t / 100), in = x * c[0],
// noise from TorchCpuGenerator(11) after the initial draw, where the sampler draws it. Returns x after each
// evaluation.
inline std::vector<std::vector<double>> hostReplay(const LinearSampler& sampler, size_t count = 64) {
  TorchCpuGenerator generator(11);
  const std::vector<float> init = generator.randn(count);
  std::vector<double> x;
  for (float v : init) x.push_back(static_cast<double>(v * sampler.initNoiseSigma()));
  const int k = sampler.registerCount();
  std::vector<std::vector<double>> registers(size_t(k), std::vector<double>(count, 0.0));
  std::vector<double> noise(count, 0.0);
  std::vector<std::vector<double>> out;
  for (int e = 0; e < sampler.evaluations(); ++e) {
    const std::vector<double>& c = sampler.evaluationCoefficients(e);
    const double offset = fakeModelOffset(sampler.evaluationTimestep(e));
    if (sampler.drawsNoise(e)) {
      const std::vector<float> n = generator.randn(count);
      noise.assign(n.begin(), n.end());
    }
    std::vector<std::vector<double>> next(size_t(k) + 1, std::vector<double>(count, 0.0));
    for (size_t i = 0; i < count; ++i) {
      const double model = 0.3 * (x[i] * c[0]) + offset;
      std::vector<double> operands = {x[i], model, noise[i]};
      for (int r = 0; r < k; ++r) operands.push_back(registers[size_t(r)][i]);
      for (int t = 0; t <= k; ++t) {
        double v = 0;
        for (size_t o = 0; o < operands.size(); ++o) v += c[1 + size_t(t) * operands.size() + o] * operands[o];
        next[size_t(t)][i] = v;
      }
    }
    x = next[0];
    for (int r = 0; r < k; ++r) registers[size_t(r)] = next[size_t(r) + 1];
    out.push_back(x);
  }
  return out;
}

}  // namespace sdgen::sampling::test
