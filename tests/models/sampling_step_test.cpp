// The samplers' per-step updates on the GPU: one recorded sequence (fake model -> latent update) replayed for
// every step with new uniforms, as the pipeline does, driven by TorchCpuGenerator(11) like the fixture's
// loop. Compared with diffusers' own results (tests/data/fixtures/schedulers.*: every step's latents) and with
// a float64 reference of each scheduler's step (tests/models/sampling_test_util.h) over more configurations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/command_sequence.h"
#include "graph/expr.h"
#include "models/safetensors.h"
#include "models/sampling/sampler.h"
#include "models/sampling/step_recorder.h"
#include "models/sampling/torch_generator.h"
#include "ops/elementwise.h"
#include "tests/models/sampling_test_util.h"
#include "tests/test_support.h"

namespace sdgen::sampling {
namespace {

using namespace graph;

constexpr uint32_t kFakeModelSlot = 0, kFirstSamplerSlot = 3;  // the sampler's slots need not start at 0
const Shape kLatentShape = {1, 4, 4, 4};
constexpr size_t kLatentCount = 64;

struct Trajectory {
  std::vector<float> init;                 // randn * init_noise_sigma
  std::vector<std::vector<double>> steps;  // latents after each step
};

template <typename T>
double maxAbs(const std::vector<T>& v) {
  double m = 0;
  for (T x : v) m = std::max(m, std::abs(static_cast<double>(x)));
  return m;
}

// The largest |got - want| / max(1, |want|, scale) over a step's latents.
double worstError(const std::vector<double>& got, const std::vector<double>& want, double scale) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(got[i] - want[i]) / std::max({1.0, std::abs(want[i]), scale});
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

class SamplerStep : public sdgen::test::VulkanTest {
 protected:
  void TearDown() override {
    RecordProperty("max_error", std::to_string(maxError_));
    std::printf("    max |gpu-ref|/max(1,|ref|) = %.3g\n", maxError_);
    sdgen::test::VulkanTest::TearDown();
  }

  Allocation tensor(const std::vector<float>& values, const char* what) {
    Allocation a = ctx().allocate(kLatentCount * sizeof(float), what);
    upload(a, values);
    return a;
  }
  void upload(const Allocation& a, const std::vector<float>& values) {
    ctx().upload(a, 0, std::span(reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)));
  }

  // The fixture's loop on the GPU: model output = 0.3 * modelInput(x) + 0.05 cos(t / 100), recorded once.
  Trajectory runGpu(const Sampler& sampler) {
    TorchCpuGenerator generator(11);
    Trajectory out;
    out.init = generator.randn(kLatentCount);
    for (float& v : out.init) v *= sampler.initNoiseSigma();  // float32 product, as torch forms it
    const std::vector<float> zeros(kLatentCount, 0.0f);
    Allocation latents = tensor(out.init, "latents"), modelOutput = tensor(zeros, "model output"),
               noise = tensor(zeros, "noise"), history = tensor(zeros, "history"), scratch = tensor(zeros, "scratch");
    const LatentUpdateTensors views{view(latents, DType::F32, kLatentShape), view(noise, DType::F32, kLatentShape),
                                    view(history, DType::F32, kLatentShape), view(scratch, DType::F32, kLatentShape)};

    CommandSequence seq(ctx());
    ops::elementwise(ctx(), seq, constant(0.3f) * sampler.modelInput(buffer(views.latents)) + uniform(kFakeModelSlot),
                     bufferSink(view(modelOutput, DType::F32, kLatentShape)));
    const int launches =
        recordLatentUpdate(ctx(), seq, sampler, views, buffer(view(modelOutput, DType::F32, kLatentShape)));
    EXPECT_EQ(launches, sampler.needsHistory() ? 3 : 1);
    seq.end();

    for (int step = 0; step < sampler.steps(); ++step) {
      sampler.setStepUniforms(step, [&](uint32_t slot, float value) { seq.setUniform(slot, value); });
      seq.setUniform(kFakeModelSlot, static_cast<float>(test::fakeModelOffset(sampler.timestep(step))));
      if (sampler.needsNoise()) upload(noise, generator.randn(kLatentCount));
      seq.run();
      const std::vector<float> x = sdgen::test::downloadFloats(ctx(), latents, kLatentCount, DType::F32);
      out.steps.emplace_back(x.begin(), x.end());
    }
    return out;
  }

  // The same loop in float64 with the reference step (same generator stream).
  std::vector<std::vector<double>> runHost(const models::SchedulerConfig& config, const Sampler& sampler) {
    TorchCpuGenerator generator(11);
    const std::vector<float> init = generator.randn(kLatentCount);
    std::vector<double> x;
    for (float v : init) x.push_back(static_cast<double>(v) * sampler.initNoiseSigma());
    test::ReferenceSampler reference(config, sampler);
    std::vector<std::vector<double>> steps;
    for (int step = 0; step < sampler.steps(); ++step) {
      const double offset = test::fakeModelOffset(sampler.timestep(step));
      std::vector<double> out;
      for (double v : reference.scaleModelInput(x, step)) out.push_back(0.3 * v + offset);
      std::vector<double> noise;
      if (sampler.needsNoise())
        for (float v : generator.randn(kLatentCount)) noise.push_back(v);
      x = reference.step(out, step, x, noise);
      steps.push_back(x);
    }
    return steps;
  }

  void expectClose(const std::vector<double>& got, const std::vector<double>& want, double tolerance,
                   const std::string& what, double scale = 0) {
    const double e = worstError(got, want, scale);
    maxError_ = std::max(maxError_, e);
    EXPECT_LE(e, tolerance) << what;
  }

  double maxError_ = 0;
};

TEST_F(SamplerStep, MatchesDiffusersFixtureStepByStep) {
  const nlohmann::json runs = test::loadSchedulerFixture();
  ASSERT_FALSE(runs.empty());
  const auto tensors = models::SafetensorsFile::open(test::schedulerFixtureTensors());
  for (const auto& run : runs) {
    const std::string id = run.at("id");
    SCOPED_TRACE(id);
    const models::SchedulerConfig config = test::configFromJson(run.at("config"));
    const auto sampler = Sampler::create(config, test::optionsFromName(run.at("scheduler")), run.at("steps"),
                                         kFirstSamplerSlot);
    const Trajectory gpu = runGpu(*sampler);
    const auto& names = run.at("tensors");
    const std::vector<float> init = tensors.readAsF32(names.at("x_init").get<std::string>());
    expectClose({gpu.init.begin(), gpu.init.end()}, {init.begin(), init.end()}, 1e-7, "initial latents");
    const std::vector<float> steps = tensors.readAsF32(names.at("x_steps").get<std::string>());
    ASSERT_EQ(steps.size(), kLatentCount * gpu.steps.size());
    for (size_t s = 0; s < gpu.steps.size(); ++s) {
      const std::vector<double> want(steps.begin() + s * kLatentCount, steps.begin() + (s + 1) * kLatentCount);
      expectClose(gpu.steps[s], want, 1e-5, "step " + std::to_string(s));
    }
    const std::vector<float> last = tensors.readAsF32(names.at("x_final").get<std::string>());
    expectClose(gpu.steps.back(), {last.begin(), last.end()}, 1e-5, "final latents");
  }
}

// The float64 reference itself against diffusers (so that the grid below compares with something true).
TEST_F(SamplerStep, ReferenceMatchesDiffusersFixture) {
  const nlohmann::json runs = test::loadSchedulerFixture();
  ASSERT_FALSE(runs.empty());
  const auto tensors = models::SafetensorsFile::open(test::schedulerFixtureTensors());
  for (const auto& run : runs) {
    SCOPED_TRACE(run.at("id").get<std::string>());
    const models::SchedulerConfig config = test::configFromJson(run.at("config"));
    const auto sampler = Sampler::create(config, test::optionsFromName(run.at("scheduler")), run.at("steps"), 0);
    const std::vector<float> last = tensors.readAsF32(run.at("tensors").at("x_final").get<std::string>());
    expectClose(runHost(config, *sampler).back(), {last.begin(), last.end()}, 1e-5, "final latents");
  }
}

// More configurations than the fixture holds: every sampler, Karras or not, each spacing and prediction type,
// step counts around DPM++ 2M's special first and last steps, DDIM's clip_sample and set_alpha_to_one.
TEST_F(SamplerStep, GpuMatchesFloat64Reference) {
  struct Variant {
    SamplerKind kind;
    bool karras;
  };
  const Variant variants[] = {{SamplerKind::Ddim, false},   {SamplerKind::Euler, false},
                              {SamplerKind::Euler, true},   {SamplerKind::EulerAncestral, false},
                              {SamplerKind::EulerAncestral, true}, {SamplerKind::DpmPP2M, false},
                              {SamplerKind::DpmPP2M, true}};
  int cases = 0;
  for (const Variant& v : variants) {
    for (const char* spacing : {"leading", "trailing", "linspace"}) {
      for (const char* prediction : {"epsilon", "v_prediction"}) {
        for (int steps : {1, 2, 3, 7, 16}) {
          models::SchedulerConfig config;
          config.timestepSpacing = spacing;
          config.predictionType = prediction;
          if (steps == 7) {  // a second beta schedule and DDIM's options
            config.betaSchedule = "linear";
            config.betaStart = 0.0001f;
            config.betaEnd = 0.02f;
            config.stepsOffset = 0;
            config.setAlphaToOne = true;
            config.clipSample = true;
          }
          const auto sampler = Sampler::create(config, {v.kind, v.karras}, steps, kFirstSamplerSlot);
          const std::string what = std::string(samplerDisplayName(v.kind, v.karras)) + " " + spacing + " " +
                                   prediction + " " + std::to_string(steps) + " steps";
          SCOPED_TRACE(what);
          const Trajectory gpu = runGpu(*sampler);
          const std::vector<std::vector<double>> host = runHost(config, *sampler);
          // Errors relative to the step's magnitude: with linear betas sigma_max is ~157, and a step that
          // cancels most of latents that large cannot be more accurate in float32 than their size allows.
          // lavapipe's sqrt/exp differ from the host's by a few ulp; seen up to 2.1e-5 (Euler a, linear betas).
          double scale = maxAbs(gpu.init);
          for (size_t s = 0; s < host.size(); ++s) {
            scale = std::max(scale, maxAbs(host[s]));
            expectClose(gpu.steps[s], host[s], 5e-5, "step " + std::to_string(s), scale);
            scale = maxAbs(host[s]);
          }
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 7 * 3 * 2 * 5);
}

TEST_F(SamplerStep, MissingOrMisshapedOperandsAreNamed) {
  const auto ancestral = Sampler::create({}, {SamplerKind::EulerAncestral, false}, 4, 0);
  const auto dpm = Sampler::create({}, {SamplerKind::DpmPP2M, false}, 4, 0);
  Allocation a = ctx().allocate(kLatentCount * sizeof(float), "latents");
  const TensorView latents = view(a, DType::F32, kLatentShape);
  const TensorView other = view(a, DType::F32, {1, 4, 2, 8});
  CommandSequence seq(ctx());
  sdgen::test::expectErrorContaining(
      [&] { recordLatentUpdate(ctx(), seq, *ancestral, {latents, {}, {}, {}}, buffer(latents)); }, "noise");
  sdgen::test::expectErrorContaining(
      [&] { recordLatentUpdate(ctx(), seq, *dpm, {latents, {}, other, latents}, buffer(latents)); }, "history");
  sdgen::test::expectErrorContaining([&] { dpm->nextLatents(buffer(latents), buffer(other), {}, buffer(latents)); },
                                     "model output");
  const auto euler = Sampler::create({}, {SamplerKind::Euler, false}, 4, 0);
  sdgen::test::expectErrorContaining([&] { euler->nextHistory(buffer(latents), buffer(latents)); }, "no history");
}

}  // namespace
}  // namespace sdgen::sampling
