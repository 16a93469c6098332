// The LinearSampler kinds (heun, dpm2, dpm2_a, dpmpp_2s_a, dpmpp_sde, dpmpp_2m_sde, lms, unipc, lcm and the
// exponential-sigma variants) against diffusers 0.42.1 (tests/data/fixtures/samplers.*): per-evaluation
// timesteps, sigmas, the initial noise scale, and the fake-model trajectory after every step() call, replayed
// on the host (float64, from the sampler's weights) and on the GPU (the recorded update, as the pipeline runs it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "models/safetensors.h"
#include "models/sampling/step_recorder.h"
#include "ops/elementwise.h"
#include "tests/models/sampler_linear_test_util.h"
#include "tests/test_support.h"

namespace sdgen::sampling {
namespace {

using namespace graph;

constexpr uint32_t kFakeModelSlot = 0, kFirstSamplerSlot = 3;
const Shape kShape = {1, 4, 4, 4};
constexpr size_t kCount = 64;

std::unique_ptr<Sampler> makeFromRun(const nlohmann::json& run, uint32_t firstSlot) {
  const test::NamedSampler named = test::samplerFromName(run.at("sampler"));
  const models::SchedulerConfig config = test::linearConfigFromJson(run.at("config"), named.exponential);
  return Sampler::create(config, named.options, run.at("steps"), firstSlot);
}

// The fixture loop on the host: from the weights for a LinearSampler, with sampling_test_util.h's float64
// reference step for the others (euler_exp: Euler with exponential sigmas).
std::vector<std::vector<double>> hostTrajectory(const nlohmann::json& run, const Sampler& sampler) {
  if (const auto* linear = dynamic_cast<const LinearSampler*>(&sampler)) return test::hostReplay(*linear, kCount);
  const test::NamedSampler named = test::samplerFromName(run.at("sampler"));
  const models::SchedulerConfig config = test::linearConfigFromJson(run.at("config"), named.exponential);
  TorchCpuGenerator generator(11);
  std::vector<double> x;
  for (float v : generator.randn(kCount)) x.push_back(static_cast<double>(v * sampler.initNoiseSigma()));
  test::ReferenceSampler reference(config, sampler);
  std::vector<std::vector<double>> out;
  for (int step = 0; step < sampler.steps(); ++step) {
    std::vector<double> model;
    for (double v : reference.scaleModelInput(x, step)) model.push_back(0.3 * v + test::fakeModelOffset(sampler.timestep(step)));
    std::vector<double> noise;
    if (sampler.needsNoise())
      for (float v : generator.randn(kCount)) noise.push_back(v);
    x = reference.step(model, step, x, noise);
    out.push_back(x);
  }
  return out;
}

// The largest |got - want| / max(1, |want|).
double worstError(const std::vector<double>& got, const std::vector<float>& want, size_t offset) {
  double worst = 0;
  for (size_t i = 0; i < kCount; ++i) {
    const double w = want[offset + i];
    const double e = std::abs(got[i] - w) / std::max(1.0, std::abs(w));
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

// diffusers' sigmas as sdgen's per-step list: Heun / DPMSolverSDE interleave [s0, s1, s1, ..., 0], KDPM2 (a) also
// repeat the final 0; step i's sigma is entry max(0, 2i - 1).
std::vector<double> stepSigmas(const nlohmann::json& run) {
  const std::vector<double> all = run.at("sigmas");
  const std::string cls = run.at("class");
  const bool interleaved = cls == "HeunDiscreteScheduler" || cls == "KDPM2DiscreteScheduler" ||
                           cls == "KDPM2AncestralDiscreteScheduler" || cls == "DPMSolverSDEScheduler";
  if (!interleaved) return all;
  const int steps = run.at("steps");
  std::vector<double> out;
  for (int i = 0; i <= steps; ++i) out.push_back(all.at(size_t(std::max(0, 2 * i - 1))));
  return out;
}

TEST(LinearSamplerSchedule, FixtureTimestepsSigmasAndInitialScale) {
  const nlohmann::json runs = test::loadLinearFixture();
  ASSERT_FALSE(runs.empty());
  for (const auto& run : runs) {
    SCOPED_TRACE(run.at("id").get<std::string>());
    // A run diffusers could not make (e.g. DPMSolverSDEScheduler without torchsde on the fixture machine) is a
    // fixture defect: regenerate it (tests/reference/sampler_fixtures.py).
    if (run.contains("error")) {
      ADD_FAILURE() << "the fixture has no result for this run: " << run.at("error").get<std::string>();
      continue;
    }
    const auto sampler = makeFromRun(run, 0);
    const std::vector<double> timesteps = run.at("timesteps");
    ASSERT_EQ(sampler->evaluations(), static_cast<int>(timesteps.size()));
    const test::NamedSampler named = test::samplerFromName(run.at("sampler"));
    for (size_t e = 0; e < timesteps.size(); ++e) {
      // The timesteps of spaced steps must be identical; those _sigma_to_t gives (Karras and exponential sigmas,
      // the midpoint evaluations of DPM2, DPM2 a and DPM++ SDE) come from NumPy's float32 log table: equal to
      // ~1e-4 (the UNet cannot tell).
      const int step = sampler->stepOfEvaluation(int(e));
      const bool midpoint = e > 0 && sampler->stepOfEvaluation(int(e) - 1) == step && named.options.kind != SamplerKind::Heun;
      const bool remapped = named.options.karras || named.exponential || midpoint;
      const double tolerance = remapped ? 2e-3 : 0.0;
      EXPECT_NEAR(sampler->evaluationTimestep(int(e)), timesteps[e], tolerance) << "evaluation " << e;
    }
    if (!run.at("sigmas").is_null() && !sampler->sigmas().empty()) {
      const std::vector<double> sigmas = stepSigmas(run);
      ASSERT_EQ(sampler->sigmas().size(), sigmas.size());
      for (size_t i = 0; i < sigmas.size(); ++i)
        EXPECT_NEAR(sampler->sigmas()[i], sigmas[i], 4e-7 * std::max(1.0, sigmas[i])) << "sigma " << i;
    }
    const double init = run.at("init_noise_sigma");
    EXPECT_NEAR(sampler->initNoiseSigma(), init, 2e-7 * init);
  }
}

TEST(LinearSamplerSchedule, HostReplayMatchesDiffusersStepByStep) {
  const nlohmann::json runs = test::loadLinearFixture();
  ASSERT_FALSE(runs.empty());
  const auto tensors = models::SafetensorsFile::open(test::linearFixtureTensors());
  double maxError = 0;
  for (const auto& run : runs) {
    if (run.contains("error")) continue;
    const std::string id = run.at("id");
    SCOPED_TRACE(id);
    const auto sampler = makeFromRun(run, 0);
    const std::vector<std::vector<double>> host = hostTrajectory(run, *sampler);
    const std::vector<float> want = tensors.readAsF32(run.at("tensors").at("x_steps").get<std::string>());
    ASSERT_EQ(want.size(), host.size() * kCount);
    for (size_t e = 0; e < host.size(); ++e) {
      const double err = worstError(host[e], want, e * kCount);
      maxError = std::max(maxError, err);
      EXPECT_LE(err, 2e-5) << "after evaluation " << e;
    }
  }
  std::printf("    max |host-diffusers|/max(1,|ref|) = %.3g\n", maxError);
}

class LinearSamplerStep : public sdgen::test::VulkanTest {
 protected:
  Allocation tensor(const char* what) {
    Allocation a = ctx().allocate(kCount * sizeof(float), what);
    upload(a, std::vector<float>(kCount, 0.0f));
    return a;
  }
  void upload(const Allocation& a, const std::vector<float>& values) {
    ctx().upload(a, 0, std::span(reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)));
  }

  // The fake-model loop on the GPU, one replay of one recording per evaluation (as the pipeline does).
  std::vector<std::vector<double>> runGpu(const LinearSampler& sampler) {
    TorchCpuGenerator generator(11);
    std::vector<float> init = generator.randn(kCount);
    for (float& v : init) v *= sampler.initNoiseSigma();
    Allocation latents = tensor("latents"), model = tensor("model output"), noise = tensor("noise");
    upload(latents, init);
    std::vector<Allocation> regs, scratch;
    LatentUpdateTensors views{view(latents, DType::F32, kShape), view(noise, DType::F32, kShape), {}, {}};
    for (int k = 0; k < sampler.registerCount(); ++k) {
      regs.push_back(tensor("register"));
      scratch.push_back(tensor("scratch"));
      views.registers.push_back(view(regs.back(), DType::F32, kShape));
      views.registerScratch.push_back(view(scratch.back(), DType::F32, kShape));
    }
    CommandSequence seq(ctx());
    ops::elementwise(ctx(), seq, constant(0.3f) * sampler.modelInput(buffer(views.latents)) + uniform(kFakeModelSlot),
                     bufferSink(view(model, DType::F32, kShape)));
    const int launches = recordLatentUpdate(ctx(), seq, sampler, views, buffer(view(model, DType::F32, kShape)));
    EXPECT_EQ(launches, 2 * sampler.registerCount() + 1);
    seq.end();
    std::vector<std::vector<double>> out;
    for (int e = 0; e < sampler.evaluations(); ++e) {
      sampler.setEvaluationUniforms(e, [&](uint32_t slot, float value) { seq.setUniform(slot, value); });
      seq.setUniform(kFakeModelSlot, static_cast<float>(test::fakeModelOffset(sampler.evaluationTimestep(e))));
      if (sampler.drawsNoise(e)) upload(noise, generator.randn(kCount));
      seq.run();
      const std::vector<float> x = sdgen::test::downloadFloats(ctx(), latents, kCount, DType::F32);
      out.emplace_back(x.begin(), x.end());
    }
    return out;
  }
};

TEST_F(LinearSamplerStep, GpuMatchesDiffusersFixture) {
  const nlohmann::json runs = test::loadLinearFixture();
  ASSERT_FALSE(runs.empty());
  const auto tensors = models::SafetensorsFile::open(test::linearFixtureTensors());
  double maxError = 0;
  for (const auto& run : runs) {
    // The 4-step runs of every sampler and mode (the host replay covers all step counts).
    if (run.contains("error") || run.at("steps") != 4) continue;
    SCOPED_TRACE(run.at("id").get<std::string>());
    const auto made = makeFromRun(run, kFirstSamplerSlot);
    const auto* sampler = dynamic_cast<const LinearSampler*>(made.get());
    if (!sampler) continue;  // euler_exp: Euler's update, covered by sampling_step_test.cpp; its trajectory above
    const std::vector<std::vector<double>> gpu = runGpu(*sampler);
    const std::vector<float> want = tensors.readAsF32(run.at("tensors").at("x_steps").get<std::string>());
    ASSERT_EQ(want.size(), gpu.size() * kCount);
    for (size_t e = 0; e < gpu.size(); ++e) {
      const double err = worstError(gpu[e], want, e * kCount);
      maxError = std::max(maxError, err);
      EXPECT_LE(err, 5e-5) << "after evaluation " << e;
    }
  }
  std::printf("    max |gpu-diffusers|/max(1,|ref|) = %.3g\n", maxError);
}

// Without fixtures: the GPU replay equals the float64 host replay of the same weights, for every kind, spacing,
// prediction type and a few step counts (the recording is right whatever the weights are).
TEST_F(LinearSamplerStep, GpuMatchesHostReplay) {
  const SamplerKind kinds[] = {SamplerKind::Heun,     SamplerKind::Dpm2,       SamplerKind::Dpm2Ancestral,
                               SamplerKind::DpmPP2SAncestral, SamplerKind::DpmPPSde, SamplerKind::DpmPP2MSde,
                               SamplerKind::Lms,      SamplerKind::UniPC,      SamplerKind::Lcm};
  for (SamplerKind kind : kinds) {
    for (const char* spacing : {"leading", "trailing"}) {
      for (int steps : {1, 3, 6}) {
        models::SchedulerConfig config;
        config.timestepSpacing = spacing;
        config.predictionType = steps == 3 ? "v_prediction" : "epsilon";
        const bool karras = steps == 6 && samplerTakesKarras(kind);
        auto base = Sampler::create(config, {kind, karras}, steps, kFirstSamplerSlot);
        const auto& sampler = dynamic_cast<const LinearSampler&>(*base);
        SCOPED_TRACE(samplerDisplayName(kind, karras) + " " + spacing + " " + std::to_string(steps) + " steps");
        const auto gpu = runGpu(sampler);
        const auto host = test::hostReplay(sampler, kCount);
        ASSERT_EQ(gpu.size(), host.size());
        for (size_t e = 0; e < gpu.size(); ++e) {
          double worst = 0;
          for (size_t i = 0; i < kCount; ++i)
            worst = std::max(worst, std::abs(gpu[e][i] - host[e][i]) / std::max(1.0, std::abs(host[e][i])));
          EXPECT_LE(worst, 2e-5) << "evaluation " << e;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sdgen::sampling
