// The scheduler config rule of diffusers 0.42.1 (models/config/scheduler_config.cpp): a sampler made with
// SchedulerClass.from_config(pipe.scheduler.config) keeps the fields the file sets and takes its own class's
// defaults for the rest. On the real SD 1.5 / SD 2.1 files (old diffusers, no timestep_spacing), on configs that a
// recent diffusers writes with every field explicit, with _use_default_values, the StableDiffusionPipeline shims,
// and every refusal naming the file, the field and the value. Against diffusers' own output: realsched_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "models/config/config_files.h"
#include "models/sampling/sampler.h"
#include "tests/models/models_test_util.h"
#include "tests/test_support.h"

namespace sdgen::models {
namespace {

using nlohmann::json;
using test::errorOf;

// stable-diffusion-v1-5/stable-diffusion-v1-5 and stabilityai/stable-diffusion-2-1 scheduler_config.json.
const std::string kSd15 = R"({"_class_name": "PNDMScheduler", "_diffusers_version": "0.6.0", "beta_end": 0.012, "beta_schedule": "scaled_linear",
 "beta_start": 0.00085, "num_train_timesteps": 1000, "set_alpha_to_one": false, "skip_prk_steps": true,
 "steps_offset": 1, "trained_betas": null, "clip_sample": false})";
const std::string kSd21 = R"({"_class_name": "DDIMScheduler", "_diffusers_version": "0.8.0", "beta_end": 0.012, "beta_schedule": "scaled_linear",
 "beta_start": 0.00085, "clip_sample": false, "num_train_timesteps": 1000, "prediction_type": "v_prediction",
 "set_alpha_to_one": false, "skip_prk_steps": true, "steps_offset": 1, "trained_betas": null})";
// What diffusers 0.42.1's save_config writes for the SD 1.5 pipeline's PNDMScheduler: every __init__ field,
// defaults included, and the file's extra clip_sample.
const std::string kSd15Resaved = R"({
  "_class_name": "PNDMScheduler", "_diffusers_version": "0.42.1", "beta_end": 0.012,
  "beta_schedule": "scaled_linear", "beta_start": 0.00085, "clip_sample": false, "num_train_timesteps": 1000,
  "prediction_type": "epsilon", "set_alpha_to_one": false, "skip_prk_steps": true, "steps_offset": 1,
  "timestep_spacing": "leading", "trained_betas": null
})";
// DPMSolverMultistepScheduler.from_config(sd15 config, use_karras_sigmas=True).save_config(): Python's json
// writes lambda_min_clipped as -Infinity.
const std::string kDpmSaved = R"({
  "_class_name": "DPMSolverMultistepScheduler", "_diffusers_version": "0.42.1", "algorithm_type": "dpmsolver++",
  "beta_end": 0.012, "beta_schedule": "scaled_linear", "beta_start": 0.00085, "clip_sample": false,
  "dynamic_thresholding_ratio": 0.995, "euler_at_final": false, "final_sigmas_type": "zero", "flow_shift": 1.0,
  "lambda_min_clipped": -Infinity, "lower_order_final": true, "num_train_timesteps": 1000,
  "prediction_type": "epsilon", "rescale_betas_zero_snr": false, "sample_max_value": 1.0, "set_alpha_to_one": false,
  "skip_prk_steps": true, "solver_order": 2, "solver_type": "midpoint", "steps_offset": 1, "thresholding": false,
  "time_shift_type": "exponential", "timestep_spacing": "linspace", "trained_betas": null, "use_beta_sigmas": false,
  "use_dynamic_shifting": false, "use_exponential_sigmas": false, "use_flow_sigmas": false,
  "use_karras_sigmas": true, "use_lu_lambdas": false, "variance_type": null
})";

constexpr const char* kDdim = "DDIMScheduler";
constexpr const char* kEuler = "EulerDiscreteScheduler";
constexpr const char* kEulerA = "EulerAncestralDiscreteScheduler";
constexpr const char* kDpm = "DPMSolverMultistepScheduler";
constexpr const char* kFile = "m/scheduler/scheduler_config.json";

SchedulerConfig resolve(const std::string& text, const char* cls) {
  return schedulerConfigFor(parseSchedulerFile(text, kFile), cls);
}
std::string with(const std::string& text, const std::string& field, const json& value) {
  json j = json::parse(text);
  j[field] = value;
  return j.dump();
}

TEST(SchedulerConfigRule, Sd15FileGivesEachClassItsOwnDefaults) {
  SchedulerFile f = parseSchedulerFile(kSd15, kFile);
  EXPECT_EQ(f.className, "PNDMScheduler");
  EXPECT_EQ(f.source, kFile);
  std::vector<std::string> set;
  for (const auto& [k, v] : f.fields) set.push_back(k);
  EXPECT_EQ(set, (std::vector<std::string>{"beta_end", "beta_schedule", "beta_start", "clip_sample",
                                            "num_train_timesteps", "set_alpha_to_one", "skip_prk_steps",
                                            "steps_offset", "trained_betas"}));
  for (const char* cls : {kDdim, kEuler, kEulerA, kDpm}) {
    SchedulerConfig c = schedulerConfigFor(f, cls);
    EXPECT_EQ(c.className, cls);
    EXPECT_EQ(c.numTrainTimesteps, 1000);
    EXPECT_FLOAT_EQ(c.betaStart, 0.00085f);
    EXPECT_FLOAT_EQ(c.betaEnd, 0.012f);
    EXPECT_EQ(c.betaSchedule, "scaled_linear");
    EXPECT_EQ(c.predictionType, "epsilon");
    EXPECT_EQ(c.stepsOffset, 1) << cls;  // set by the file
    // Not set by the file: DDIM's default "leading", the k-diffusion-style classes' "linspace" (not PNDM's).
    EXPECT_EQ(c.timestepSpacing, cls == kDdim ? "leading" : "linspace") << cls;
    EXPECT_FALSE(c.useKarrasSigmas);
    EXPECT_FALSE(c.sigmaMin.has_value());
  }
  SchedulerConfig ddim = schedulerConfigFor(f, kDdim);
  EXPECT_FALSE(ddim.setAlphaToOne);  // set by the file (DDIM's default is true)
  EXPECT_FALSE(ddim.clipSample);     // set by the file (DDIM's default is true)
  // What the samplers then compute: Euler's 4 steps over linspace(0, 999), DDIM's leading ones + steps_offset.
  auto timesteps = [&](const char* cls, sampling::SamplerKind kind) {
    return sampling::Sampler::create(schedulerConfigFor(f, cls), {kind, false}, 4, 0)->timesteps();
  };
  EXPECT_EQ(timesteps(kEuler, sampling::SamplerKind::Euler), (std::vector<float>{999, 666, 333, 0}));
  EXPECT_EQ(timesteps(kDdim, sampling::SamplerKind::Ddim), (std::vector<float>{751, 501, 251, 1}));
  EXPECT_EQ(timesteps(kDpm, sampling::SamplerKind::DpmPP2M), (std::vector<float>{999, 749, 500, 250}));
}

// The classes of the samplers of issue 21 on the SD 1.5 file: their own defaults where the file is silent (LCM's
// "leading", every other class's "linspace"; UniPC's solver_order 2, bh2; LCM's 50 original steps).
TEST(SchedulerConfigRule, Sd15FileForTheNewSamplerClasses) {
  SchedulerFile f = parseSchedulerFile(kSd15, kFile);
  for (auto kind : {sampling::SamplerKind::Heun, sampling::SamplerKind::Dpm2, sampling::SamplerKind::Dpm2Ancestral,
                    sampling::SamplerKind::DpmPP2SAncestral, sampling::SamplerKind::DpmPPSde,
                    sampling::SamplerKind::DpmPP2MSde, sampling::SamplerKind::Lms, sampling::SamplerKind::UniPC,
                    sampling::SamplerKind::Lcm}) {
    const char* cls = sampling::diffusersSchedulerClass(kind);
    SCOPED_TRACE(cls);
    const SchedulerConfig c = schedulerConfigFor(f, cls);
    EXPECT_EQ(c.className, cls);
    EXPECT_EQ(c.stepsOffset, 1);
    EXPECT_EQ(c.timestepSpacing, kind == sampling::SamplerKind::Lcm ? "leading" : "linspace");
    EXPECT_FALSE(c.clipSample);
    EXPECT_FALSE(c.useExponentialSigmas);
    EXPECT_NO_THROW(sampling::Sampler::create(c, {kind, false}, 4, 0));
  }
  const SchedulerConfig unipc = schedulerConfigFor(f, "UniPCMultistepScheduler");
  EXPECT_EQ(unipc.solverOrder, 2);
  EXPECT_EQ(unipc.solverType, "bh2");
  EXPECT_TRUE(unipc.lowerOrderFinal);
  EXPECT_TRUE(unipc.disableCorrector.empty());
  const SchedulerConfig lcm = schedulerConfigFor(f, "LCMScheduler");
  EXPECT_EQ(lcm.originalInferenceSteps, 50);
  EXPECT_EQ(lcm.timestepScaling, 10.0);
  // Heun's 4 linspace steps: 999, 666, 333, 0 interleaved as diffusers lists them.
  const auto heun = sampling::Sampler::create(schedulerConfigFor(f, "HeunDiscreteScheduler"),
                                              {sampling::SamplerKind::Heun, false}, 4, 0);
  std::vector<float> evaluations;
  for (int e = 0; e < heun->evaluations(); ++e) evaluations.push_back(heun->evaluationTimestep(e));
  EXPECT_EQ(evaluations, (std::vector<float>{999, 666, 666, 333, 333, 0, 0}));
  const SchedulerConfig exponential =
      schedulerConfigFor(parseSchedulerFile(with(kSd15, "use_exponential_sigmas", true), kFile), "LMSDiscreteScheduler");
  EXPECT_TRUE(exponential.useExponentialSigmas);
  test::expectErrorContaining(
      [&] { schedulerConfigFor(parseSchedulerFile(with(with(kSd15, "use_exponential_sigmas", true), "use_karras_sigmas", true), kFile), "HeunDiscreteScheduler"); },
      "cannot both be true");
  test::expectErrorContaining(
      [&] { schedulerConfigFor(parseSchedulerFile(with(kSd15, "disable_corrector", "x"), kFile), "UniPCMultistepScheduler"); },
      "disable_corrector");
}

TEST(SchedulerConfigRule, Sd21FileKeepsVPredictionEverywhere) {
  for (const char* cls : {kDdim, kEuler, kEulerA, kDpm}) {
    SchedulerConfig c = resolve(kSd21, cls);
    EXPECT_EQ(c.predictionType, "v_prediction") << cls;
    EXPECT_EQ(c.stepsOffset, 1);
    EXPECT_EQ(c.timestepSpacing, cls == kDdim ? "leading" : "linspace") << cls;
  }
  EXPECT_FALSE(resolve(kSd21, kDdim).setAlphaToOne);
  EXPECT_FALSE(resolve(kSd21, kDdim).clipSample);
}

TEST(SchedulerConfigRule, ConfigsWrittenByRecentDiffusersKeepEveryField) {
  // The re-saved SD 1.5 config names timestep_spacing "leading": every sampler keeps it, Euler included.
  for (const char* cls : {kDdim, kEuler, kEulerA, kDpm}) EXPECT_EQ(resolve(kSd15Resaved, cls).timestepSpacing, "leading");
  // A saved DPM++ Karras config: linspace for DDIM too, Karras for the classes that take use_karras_sigmas.
  SchedulerFile dpm = parseSchedulerFile(kDpmSaved, kFile);
  EXPECT_EQ(dpm.fields.at("lambda_min_clipped"), "-Infinity");
  EXPECT_EQ(schedulerConfigFor(dpm, kDdim).timestepSpacing, "linspace");
  EXPECT_FALSE(schedulerConfigFor(dpm, kDdim).setAlphaToOne);
  EXPECT_FALSE(schedulerConfigFor(dpm, kDdim).useKarrasSigmas);
  EXPECT_TRUE(schedulerConfigFor(dpm, kEuler).useKarrasSigmas);
  EXPECT_FALSE(schedulerConfigFor(dpm, kEulerA).useKarrasSigmas);  // EulerAncestral has no Karras option
  EXPECT_TRUE(schedulerConfigFor(dpm, kDpm).useKarrasSigmas);
  // The tiny models' full DDIM config (diffusers 0.42.1): trailing + v for every class.
  const std::string tiny = with(with(kSd21, "timestep_spacing", "trailing"), "thresholding", false);
  for (const char* cls : {kDdim, kEuler, kEulerA, kDpm}) EXPECT_EQ(resolve(tiny, cls).timestepSpacing, "trailing");
}

TEST(SchedulerConfigRule, UseDefaultValuesCountsAsNotSet) {
  // dict(pipe.scheduler.config) written out as it is: PNDM's defaults are in the file, listed as defaulted.
  json dumped = json::parse(kSd15);
  dumped["timestep_spacing"] = "leading";
  dumped["prediction_type"] = "epsilon";
  dumped["_use_default_values"] = {"prediction_type", "timestep_spacing"};
  SchedulerFile f = parseSchedulerFile(dumped.dump(), kFile);
  EXPECT_EQ(f.fields.count("timestep_spacing"), 0u);
  EXPECT_EQ(schedulerConfigFor(f, kEuler).timestepSpacing, "linspace");
  dumped.erase("_use_default_values");
  EXPECT_EQ(resolve(dumped.dump(), kEuler).timestepSpacing, "leading");
  const std::string msg = errorOf([&] { parseSchedulerFile(with(kSd15, "_use_default_values", "x"), kFile); });
  EXPECT_NE(msg.find(kFile), std::string::npos) << msg;
  EXPECT_NE(msg.find("_use_default_values"), std::string::npos) << msg;
}

TEST(SchedulerConfigRule, ClassDefaultsAndPipelineShims) {
  // A DDIM config that sets neither set_alpha_to_one nor clip_sample nor steps_offset: DDIM's defaults (true,
  // true, 0), whatever _class_name says.
  json bare = json::parse(kSd15);
  for (const char* f : {"set_alpha_to_one", "clip_sample", "steps_offset"}) bare.erase(f);
  for (const char* name : {"PNDMScheduler", "DDIMScheduler", "SomethingElse"}) {
    SchedulerConfig c = resolve(with(bare.dump(), "_class_name", name), kDdim);
    EXPECT_TRUE(c.setAlphaToOne);
    EXPECT_TRUE(c.clipSample);
    EXPECT_EQ(c.clipSampleRange, 1.0);
    EXPECT_EQ(c.stepsOffset, 0);
  }
  // StableDiffusionPipeline rewrites a steps_offset the config sets to 1 and a clip_sample true to false.
  EXPECT_EQ(resolve(with(kSd15, "steps_offset", 0), kEuler).stepsOffset, 1);
  EXPECT_EQ(resolve(with(kSd15, "steps_offset", 3), kDdim).stepsOffset, 1);
  EXPECT_FALSE(resolve(with(kSd15, "clip_sample", true), kDdim).clipSample);
  EXPECT_EQ(resolve(with(with(bare.dump(), "clip_sample_range", 2.5), "set_alpha_to_one", false), kDdim).clipSampleRange,
            2.5);
  // sigma_min / sigma_max: Euler takes them; DPM++ reads them from the config for its Karras sigmas.
  const std::string sigmas = with(with(kSd15, "sigma_min", 0.1), "sigma_max", 10.0);
  for (const char* cls : {kEuler, kDpm}) {
    EXPECT_EQ(resolve(sigmas, cls).sigmaMin, 0.1) << cls;
    EXPECT_EQ(resolve(sigmas, cls).sigmaMax, 10.0) << cls;
  }
  EXPECT_FALSE(resolve(sigmas, kEulerA).sigmaMin.has_value());
  // Euler's `bool | None` flags: null is false.
  EXPECT_FALSE(resolve(with(with(kSd15, "use_karras_sigmas", nullptr), "use_beta_sigmas", nullptr), kEuler).useKarrasSigmas);
  EXPECT_TRUE(resolve(with(kSd15, "use_karras_sigmas", true), kEuler).useKarrasSigmas);
  auto karras = [&](const char* cls, sampling::SamplerKind kind) {
    return sampling::Sampler::create(resolve(sigmas, cls), {kind, true}, 4, 0)->sigmas();
  };
  for (auto [cls, kind] : {std::pair{kEuler, sampling::SamplerKind::Euler}, {kDpm, sampling::SamplerKind::DpmPP2M}}) {
    std::vector<float> s = karras(cls, kind);
    ASSERT_EQ(s.size(), 5u);
    EXPECT_FLOAT_EQ(s[0], 10.0f) << cls;
    EXPECT_FLOAT_EQ(s[3], 0.1f) << cls;
  }
}

struct Refusal {
  const char* field;
  json value;
  const char* shown;
  std::vector<const char*> refusedBy;  // the classes that read the field; the others accept the file
};

TEST(SchedulerConfigRule, RefusalsNameFileFieldValueAndClass) {
  const char* kSingle = "DPMSolverSinglestepScheduler";
  const char* kUniPC = "UniPCMultistepScheduler";
  const char* kLcm = "LCMScheduler";
  const Refusal refusals[] = {
      {"thresholding", true, "true", {kDdim, kDpm, kSingle, kUniPC, kLcm}},
      {"interpolation_type", "log_linear", "\"log_linear\"", {kEuler}},
      {"timestep_type", "continuous", "\"continuous\"", {kEuler}},
      // Exponential sigmas: implemented for the interpolated-sigma classes, refused by the DPM-Solver/UniPC ones.
      {"use_exponential_sigmas", true, "true", {kDpm, kSingle, kUniPC}},
      {"use_beta_sigmas", true, "true",
       {kEuler, kDpm, kSingle, kUniPC, "HeunDiscreteScheduler", "KDPM2DiscreteScheduler",
        "KDPM2AncestralDiscreteScheduler", "LMSDiscreteScheduler", "DPMSolverSDEScheduler"}},
      {"final_sigmas_type", "sigma_min", "\"sigma_min\"", {kEuler, kDpm, kSingle, kUniPC}},
      {"solver_order", 4, "4", {kDpm, kSingle, kUniPC}},
      {"algorithm_type", "dpmsolver", "\"dpmsolver\"", {kDpm, kSingle}},
      {"solver_type", "heun", "\"heun\"", {kDpm, kSingle, kUniPC}},
      {"use_lu_lambdas", true, "true", {kDpm}},
      {"variance_type", "learned_range", "\"learned_range\"", {kDpm, kSingle}},
      {"lambda_min_clipped", -5.1, "-5.1", {kDpm, kSingle}},
      {"predict_x0", false, "false", {kUniPC}},
      {"lower_order_final", false, "false", {kUniPC}},
      {"noise_sampler_seed", 7, "7", {"DPMSolverSDEScheduler"}},
  };
  for (const Refusal& r : refusals) {
    const std::string text = with(kSd15, r.field, r.value);
    SchedulerFile f = parseSchedulerFile(text, kFile);  // loading accepts it: some sampler may not read it
    for (const char* cls : {kDdim, kEuler, kEulerA, kDpm, kSingle, kUniPC, kLcm, "HeunDiscreteScheduler",
                            "KDPM2DiscreteScheduler", "KDPM2AncestralDiscreteScheduler", "LMSDiscreteScheduler",
                            "DPMSolverSDEScheduler"}) {
      const bool refused = std::find(r.refusedBy.begin(), r.refusedBy.end(), cls) != r.refusedBy.end();
      if (!refused) {
        EXPECT_NO_THROW(schedulerConfigFor(f, cls)) << r.field << " " << cls;
        continue;
      }
      const std::string msg = errorOf([&] { schedulerConfigFor(f, cls); });
      for (const std::string& part : {std::string(kFile), std::string(r.field), std::string(r.shown), std::string(cls)})
        EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
    }
  }
  test::expectErrorContaining([] { schedulerConfigFor(parseSchedulerFile(kSd15, kFile), "PNDMScheduler"); },
                              "no scheduler class 'PNDMScheduler'");
}

TEST(SchedulerConfigRule, FieldsEverySamplerReadsAreCheckedOnLoad) {
  for (const char* field : {"num_train_timesteps", "beta_start", "beta_end", "beta_schedule"}) {
    json j = json::parse(kSd15);
    j.erase(field);
    const std::string msg = errorOf([&] { parseSchedulerFile(j.dump(), kFile); });
    EXPECT_NE(msg.find("'" + std::string(kFile) + "': field '" + field + "' is missing"), std::string::npos) << msg;
  }
  const std::pair<const char*, json> bad[] = {
      {"beta_schedule", "squaredcos_cap_v2"}, {"prediction_type", "sample"}, {"trained_betas", {0.1, 0.2}},
      {"rescale_betas_zero_snr", true},     {"timestep_spacing", "karras"}, {"num_train_timesteps", "1000"},
      {"beta_start", nullptr},              {"steps_offset", "1"}};
  for (const auto& entry : bad) {
    // (Not a structured binding: clang 14, which the sanitizer build uses, cannot capture one in a lambda.)
    const char* field = entry.first;
    const json& value = entry.second;
    const std::string msg = errorOf([&] { parseSchedulerFile(with(kSd15, field, value), kFile); });
    EXPECT_NE(msg.find(kFile), std::string::npos) << msg;
    EXPECT_NE(msg.find(field), std::string::npos) << msg;
    EXPECT_NE(msg.find(value.dump()), std::string::npos) << msg;
  }
  test::expectErrorContaining([] { parseSchedulerFile(with(kSd15, "beta_end", 0.0001), "s.json"); },
                              "0 < beta_start < beta_end < 1");
  // Python's non-finite spellings are numbers outside strings only.
  SchedulerFile f = parseSchedulerFile(with(kSd15, "note", "-Infinity, NaN"), kFile);
  EXPECT_EQ(f.fields.at("note"), "\"-Infinity, NaN\"");
  test::expectErrorContaining([] { parseSchedulerFile(R"({"beta_start": -Infinit})", kFile); }, "not valid JSON");
}

}  // namespace
}  // namespace sdgen::models
