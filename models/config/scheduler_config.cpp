// scheduler/scheduler_config.json -> SchedulerFile (what the file sets), and SchedulerFile -> SchedulerConfig for
// one diffusers scheduler class, as diffusers 0.42.1 does it for a user who loads a StableDiffusionPipeline and
// switches samplers with `pipe.scheduler = SchedulerClass.from_config(pipe.scheduler.config)`:
//  - loading (ConfigMixin.load_config + from_config of the model_index.json class) records in the config every
//    field the file sets plus the loaded class's defaults, and lists those defaulted fields in
//    `_use_default_values`; a field the file lists in `_use_default_values` itself counts as not set;
//  - StableDiffusionPipeline.__init__ rewrites a steps_offset other than 1 to 1 and a clip_sample true to false
//    in that config (deprecation shims), without touching `_use_default_values`;
//  - from_config (extract_init_dict) drops the fields in `_use_default_values` and passes the rest that the new
//    class's __init__ takes: so a field the file sets keeps the file's value (after the shims), and every other
//    field takes the default of the class being created, not of `_class_name`. Fields the new class does not take
//    stay in its config too: DPMSolverMultistepScheduler's Karras sigmas read sigma_min / sigma_max from it.
// A config written by a recent diffusers sets every field of its class explicitly, so those values carry over to
// every sampler (timestep_spacing "leading" from a re-saved PNDM config makes Euler "leading" too).
// The noise schedule (num_train_timesteps, beta_start, beta_end, beta_schedule) is required: every class has
// defaults for it, but they are DDPM's (0.0001..0.02 linear), not Stable Diffusion's, so a file without them is
// almost surely wrong. Values sdgen does not implement are refused naming the file, the field and the class.
#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "models/config/config_files.h"
#include "models/config/config_json.h"

namespace sdgen::models {

namespace {

using nlohmann::json;

struct Param {
  const char* name;
  const char* defaultJson;  // the __init__ default as JSON; nullptr: required by sdgen (the noise schedule)
};

// The noise schedule and what every scheduler class takes; EulerAncestralDiscreteScheduler takes exactly these.
#define SDGEN_COMMON_PARAMS                                                                                  \
  {"num_train_timesteps", nullptr}, {"beta_start", nullptr}, {"beta_end", nullptr}, {"beta_schedule", nullptr}, \
      {"trained_betas", "null"}, {"prediction_type", "\"epsilon\""}, {"steps_offset", "0"},                  \
      {"rescale_betas_zero_snr", "false"}

// The same for the classes whose __init__ has no rescale_betas_zero_snr.
#define SDGEN_KDIFF_PARAMS                                                                                   \
  {"num_train_timesteps", nullptr}, {"beta_start", nullptr}, {"beta_end", nullptr}, {"beta_schedule", nullptr}, \
      {"trained_betas", "null"}, {"prediction_type", "\"epsilon\""}, {"steps_offset", "0"}
#define SDGEN_SIGMA_SCHEDULE_PARAMS \
  {"use_karras_sigmas", "false"}, {"use_exponential_sigmas", "false"}, {"use_beta_sigmas", "false"}

struct SchedulerClass {
  const char* name;
  std::vector<Param> params;  // __init__ parameters of diffusers 0.42.1 with their defaults
};

const std::vector<SchedulerClass>& schedulerClasses() {
  static const std::vector<SchedulerClass> classes = {
      {"DDIMScheduler",
       {SDGEN_COMMON_PARAMS, {"timestep_spacing", "\"leading\""}, {"clip_sample", "true"}, {"set_alpha_to_one", "true"},
        {"thresholding", "false"}, {"dynamic_thresholding_ratio", "0.995"}, {"clip_sample_range", "1.0"},
        {"sample_max_value", "1.0"}}},
      {"EulerDiscreteScheduler",
       {SDGEN_COMMON_PARAMS, {"timestep_spacing", "\"linspace\""}, {"interpolation_type", "\"linear\""},
        {"use_karras_sigmas", "false"}, {"use_exponential_sigmas", "false"}, {"use_beta_sigmas", "false"},
        {"sigma_min", "null"}, {"sigma_max", "null"}, {"timestep_type", "\"discrete\""},
        {"final_sigmas_type", "\"zero\""}}},
      {"EulerAncestralDiscreteScheduler", {SDGEN_COMMON_PARAMS, {"timestep_spacing", "\"linspace\""}}},
      {"DPMSolverMultistepScheduler",
       {SDGEN_COMMON_PARAMS, {"timestep_spacing", "\"linspace\""}, {"solver_order", "2"}, {"thresholding", "false"},
        {"dynamic_thresholding_ratio", "0.995"}, {"sample_max_value", "1.0"}, {"algorithm_type", "\"dpmsolver++\""},
        {"solver_type", "\"midpoint\""}, {"lower_order_final", "true"}, {"euler_at_final", "false"},
        {"use_karras_sigmas", "false"}, {"use_exponential_sigmas", "false"}, {"use_beta_sigmas", "false"},
        {"use_lu_lambdas", "false"}, {"use_flow_sigmas", "false"}, {"flow_shift", "1.0"},
        {"final_sigmas_type", "\"zero\""}, {"lambda_min_clipped", "-Infinity"}, {"variance_type", "null"},
        {"use_dynamic_shifting", "false"}, {"time_shift_type", "\"exponential\""}}},
      {"HeunDiscreteScheduler",
       {SDGEN_KDIFF_PARAMS, SDGEN_SIGMA_SCHEDULE_PARAMS, {"clip_sample", "false"}, {"clip_sample_range", "1.0"},
        {"timestep_spacing", "\"linspace\""}}},
      {"KDPM2DiscreteScheduler", {SDGEN_KDIFF_PARAMS, SDGEN_SIGMA_SCHEDULE_PARAMS, {"timestep_spacing", "\"linspace\""}}},
      {"KDPM2AncestralDiscreteScheduler",
       {SDGEN_KDIFF_PARAMS, SDGEN_SIGMA_SCHEDULE_PARAMS, {"timestep_spacing", "\"linspace\""}}},
      {"LMSDiscreteScheduler", {SDGEN_KDIFF_PARAMS, SDGEN_SIGMA_SCHEDULE_PARAMS, {"timestep_spacing", "\"linspace\""}}},
      {"DPMSolverSDEScheduler",
       {SDGEN_KDIFF_PARAMS, SDGEN_SIGMA_SCHEDULE_PARAMS, {"noise_sampler_seed", "null"},
        {"timestep_spacing", "\"linspace\""}}},
      // No timestep_spacing nor steps_offset in its __init__: its timesteps are always linspace; the entry here
      // only lets the common fields be read.
      {"DPMSolverSinglestepScheduler",
       {SDGEN_KDIFF_PARAMS, {"timestep_spacing", "\"linspace\""}, {"solver_order", "2"}, {"thresholding", "false"},
        {"dynamic_thresholding_ratio", "0.995"}, {"sample_max_value", "1.0"}, {"algorithm_type", "\"dpmsolver++\""},
        {"solver_type", "\"midpoint\""}, {"lower_order_final", "false"}, SDGEN_SIGMA_SCHEDULE_PARAMS,
        {"use_flow_sigmas", "false"}, {"flow_shift", "1.0"}, {"final_sigmas_type", "\"zero\""},
        {"lambda_min_clipped", "-Infinity"}, {"variance_type", "null"}, {"use_dynamic_shifting", "false"},
        {"time_shift_type", "\"exponential\""}}},
      {"UniPCMultistepScheduler",
       {SDGEN_COMMON_PARAMS, {"solver_order", "2"}, {"thresholding", "false"}, {"dynamic_thresholding_ratio", "0.995"},
        {"sample_max_value", "1.0"}, {"predict_x0", "true"}, {"solver_type", "\"bh2\""},
        {"lower_order_final", "true"}, {"disable_corrector", "[]"}, {"solver_p", "null"}, SDGEN_SIGMA_SCHEDULE_PARAMS,
        {"use_flow_sigmas", "false"}, {"flow_shift", "1.0"}, {"timestep_spacing", "\"linspace\""},
        {"final_sigmas_type", "\"zero\""}, {"use_dynamic_shifting", "false"},
        {"time_shift_type", "\"exponential\""}, {"sigma_min", "null"}, {"sigma_max", "null"},
        {"shift_terminal", "null"}}},
      {"LCMScheduler",
       {SDGEN_COMMON_PARAMS, {"original_inference_steps", "50"}, {"clip_sample", "false"},
        {"clip_sample_range", "1.0"}, {"set_alpha_to_one", "true"}, {"thresholding", "false"},
        {"dynamic_thresholding_ratio", "0.995"}, {"sample_max_value", "1.0"}, {"timestep_spacing", "\"leading\""},
        {"timestep_scaling", "10.0"}}},
  };
  return classes;
}
#undef SDGEN_COMMON_PARAMS
#undef SDGEN_KDIFF_PARAMS
#undef SDGEN_SIGMA_SCHEDULE_PARAMS

const SchedulerClass& findClass(std::string_view name) {
  std::string known;
  for (const SchedulerClass& c : schedulerClasses()) {
    if (name == c.name) return c;
    known += (known.empty() ? "" : ", ") + std::string(c.name);
  }
  throw Error("no scheduler class '" + std::string(name) + "' in sdgen (it builds " + known + ")");
}

bool takes(const SchedulerClass& c, std::string_view field) {
  for (const Param& p : c.params)
    if (field == p.name) return true;
  return false;
}

json parseValue(const std::string& text, const std::string& file) {
  return ConfigJson::parse("{\"v\": " + text + "}", file).root().at("v");
}

SchedulerFile fromJson(const ConfigJson& j) {
  SchedulerFile f;
  f.source = j.file();
  f.className = j.string("_class_name", "");
  const std::vector<std::string> defaulted = j.stringList("_use_default_values", std::vector<std::string>{});
  for (const auto& [key, value] : j.root().items()) {
    if (key.starts_with("_") || std::find(defaulted.begin(), defaulted.end(), key) != defaulted.end()) continue;
    f.fields[key] = pythonJsonDump(value);
  }
  // The fields every sdgen sampler reads (EulerAncestralDiscreteScheduler takes nothing else) are checked now;
  // the class-specific ones when a sampler of that class is made.
  schedulerConfigFor(f, "EulerAncestralDiscreteScheduler");
  return f;
}

}  // namespace

SchedulerConfig schedulerConfigFor(const SchedulerFile& file, const std::string& className) {
  const SchedulerClass& cls = findClass(className);
  json values = json::object();
  for (const Param& p : cls.params) {
    auto it = file.fields.find(p.name);
    if (it != file.fields.end())
      values[p.name] = parseValue(it->second, file.source);
    else if (p.defaultJson)
      values[p.name] = parseValue(p.defaultJson, file.source);
  }
  // Read through the config object whatever the class's __init__ signature (hasattr(self.config, ...)).
  for (const char* hidden : {"sigma_min", "sigma_max"})
    if (!takes(cls, hidden) && file.fields.count(hidden))
      values[hidden] = parseValue(file.fields.at(hidden), file.source);
  const ConfigJson j = ConfigJson::fromObject(std::move(values), file.source);
  const std::string by = std::string("; scheduler class ") + cls.name;

  SchedulerConfig c;
  c.className = cls.name;
  c.source = file.source;
  c.numTrainTimesteps = j.integer("num_train_timesteps");
  c.betaStart = static_cast<float>(j.number("beta_start"));
  c.betaEnd = static_cast<float>(j.number("beta_end"));
  c.betaSchedule = j.string("beta_schedule");
  if (c.betaSchedule != "linear" && c.betaSchedule != "scaled_linear")
    j.unsupported("beta_schedule", "sdgen implements \"scaled_linear\" and \"linear\"");
  j.refuseIfSet("trained_betas", "explicit beta lists");
  if (takes(cls, "rescale_betas_zero_snr"))
    j.refuseUnlessEquals("rescale_betas_zero_snr", false, "zero-terminal-SNR rescaling");
  c.predictionType = j.string("prediction_type");
  if (c.predictionType != "epsilon" && c.predictionType != "v_prediction")
    j.unsupported("prediction_type", "sdgen implements \"epsilon\" and \"v_prediction\"");
  // StableDiffusionPipeline's shim: a steps_offset in the config becomes 1; a defaulted one is dropped by
  // from_config and the new class's 0 applies.
  c.stepsOffset = j.integer("steps_offset");
  if (file.fields.count("steps_offset")) c.stepsOffset = 1;
  c.timestepSpacing = j.string("timestep_spacing");
  if (c.timestepSpacing != "leading" && c.timestepSpacing != "trailing" && c.timestepSpacing != "linspace")
    j.unsupported("timestep_spacing", "sdgen implements \"leading\", \"trailing\" and \"linspace\"");

  if (takes(cls, "clip_sample")) {  // DDIM, Heun, LCM
    if (takes(cls, "set_alpha_to_one")) c.setAlphaToOne = j.boolean("set_alpha_to_one");
    // The pipeline's other shim: clip_sample true in the config becomes false, so whatever the file sets ends up
    // false; a defaulted true (DDIM's) is dropped by from_config and applies.
    c.clipSample = j.boolean("clip_sample") && !file.fields.count("clip_sample");
    c.clipSampleRange = j.number("clip_sample_range");
    if (!(c.clipSampleRange > 0)) j.fail("clip_sample_range", "must be positive");
  }
  if (takes(cls, "thresholding")) j.refuseUnlessEquals("thresholding", false, "dynamic thresholding" + by);
  // Euler types these `bool | None`: null reads as false, as Python's truth test does.
  auto flag = [&](const char* field) { return j.present(field) && j.boolean(field); };
  const std::string_view name = cls.name;
  if (takes(cls, "use_karras_sigmas")) {  // every class but DDIM, Euler a and LCM
    c.useKarrasSigmas = flag("use_karras_sigmas");
    // Exponential sigmas where sdgen's schedule has them: the interpolated-sigma (k-diffusion) classes.
    const bool exponentialOk = name == "EulerDiscreteScheduler" || name == "HeunDiscreteScheduler" ||
                               name == "KDPM2DiscreteScheduler" || name == "KDPM2AncestralDiscreteScheduler" ||
                               name == "LMSDiscreteScheduler" || name == "DPMSolverSDEScheduler";
    c.useExponentialSigmas = flag("use_exponential_sigmas");
    if (c.useExponentialSigmas && !exponentialOk)
      j.unsupported("use_exponential_sigmas", "exponential sigma schedules" + by);
    if (c.useExponentialSigmas && c.useKarrasSigmas)
      j.fail("use_exponential_sigmas", "and use_karras_sigmas cannot both be true (diffusers refuses it too)");
    if (flag("use_beta_sigmas")) j.unsupported("use_beta_sigmas", "beta sigma schedules" + by);
    if (takes(cls, "final_sigmas_type"))
      j.refuseUnlessEquals("final_sigmas_type", "zero", "a final sigma other than 0" + by);
    if (j.present("sigma_min") || takes(cls, "sigma_min")) c.sigmaMin = j.optionalNumber("sigma_min");
    if (j.present("sigma_max") || takes(cls, "sigma_max")) c.sigmaMax = j.optionalNumber("sigma_max");
    if ((c.sigmaMin && !(*c.sigmaMin > 0)) || (c.sigmaMax && !(*c.sigmaMax > c.sigmaMin.value_or(0))))
      j.fail(c.sigmaMin && !(*c.sigmaMin > 0) ? "sigma_min" : "sigma_max",
             "must satisfy 0 < sigma_min < sigma_max where given");
  }
  if (takes(cls, "interpolation_type")) {  // Euler
    j.refuseUnlessEquals("interpolation_type", "linear", "log-linear sigma interpolation" + by);
    j.refuseUnlessEquals("timestep_type", "discrete", "continuous timesteps" + by);
  }
  if (takes(cls, "use_flow_sigmas")) {
    j.refuseUnlessEquals("use_flow_sigmas", false, "flow-matching sigmas" + by);
    j.refuseUnlessEquals("use_dynamic_shifting", false, "dynamic shifting" + by);
  }
  if (name == "DPMSolverMultistepScheduler" || name == "DPMSolverSinglestepScheduler") {  // DPM++ 2M (SDE), 2S a
    j.refuseUnlessEquals("solver_order", 2, "sdgen's DPM-Solver samplers are of order 2" + by);
    // The sampler picks the algorithm (dpmpp_2m: dpmsolver++, dpmpp_2m_sde / dpmpp_2s_a: sde-dpmsolver++), as
    // Class.from_config(config, algorithm_type=...) does; a config may hold either.
    const std::string algorithm = j.string("algorithm_type");
    if (algorithm != "dpmsolver++" && algorithm != "sde-dpmsolver++")
      j.unsupported("algorithm_type", "sdgen implements \"dpmsolver++\" and \"sde-dpmsolver++\"" + by);
    j.refuseUnlessEquals("solver_type", "midpoint", "sdgen's DPM-Solver samplers use the \"midpoint\" update" + by);
    j.boolean("lower_order_final");  // with final sigma 0 the last step is first order either way
    if (takes(cls, "euler_at_final")) j.boolean("euler_at_final");
    if (takes(cls, "use_lu_lambdas")) j.refuseUnlessEquals("use_lu_lambdas", false, "uniform-lambda steps" + by);
    j.refuseIfSet("variance_type", "learned variances" + by);
    const json& lambda = j.raw("lambda_min_clipped");
    if (!lambda.is_number() || !std::isinf(lambda.get<double>()) || lambda.get<double>() > 0)
      j.unsupported("lambda_min_clipped", "sdgen clips no lambda (-Infinity)" + by);
  }
  if (name == "UniPCMultistepScheduler") {
    c.solverOrder = j.integer("solver_order");
    if (c.solverOrder < 1 || c.solverOrder > 3)
      j.unsupported("solver_order", "sdgen's UniPC is of order 1, 2 or 3" + by);
    j.refuseUnlessEquals("predict_x0", true, "UniPC with noise prediction (predict_x0 false)" + by);
    c.solverType = j.string("solver_type");
    if (c.solverType != "bh1" && c.solverType != "bh2")
      j.unsupported("solver_type", "sdgen implements bh1 and bh2" + by);
    c.lowerOrderFinal = j.boolean("lower_order_final");
    if (!c.lowerOrderFinal) j.unsupported("lower_order_final", "sdgen's UniPC lowers the order at the end (true)" + by);
    j.refuseIfSet("solver_p", "a separate predictor scheduler" + by);
    j.refuseIfSet("shift_terminal", "terminal shifting" + by);
    const json& disabled = j.raw("disable_corrector");
    if (!disabled.is_array()) j.fail("disable_corrector", "must be a list of step indices");
    for (const json& v : disabled) {
      if (!v.is_number_integer()) j.fail("disable_corrector", "must be a list of step indices");
      c.disableCorrector.push_back(v.get<int>());
    }
  }
  if (name == "DPMSolverSDEScheduler")
    j.refuseIfSet("noise_sampler_seed", "a Brownian-tree seed (docs/samplers.md)" + by);
  if (name == "LCMScheduler") {
    c.originalInferenceSteps = j.integer("original_inference_steps");
    c.timestepScaling = j.number("timestep_scaling");
  }
  validateSchedulerConfig(c);
  return c;
}

SchedulerFile parseSchedulerFile(const std::string& text, const std::string& file) {
  return fromJson(ConfigJson::parse(text, file));
}

SchedulerFile loadSchedulerFile(const std::string& path) { return fromJson(ConfigJson::load(path)); }

void validateSchedulerConfig(const SchedulerConfig& c) {
  auto fail = [&](const std::string& what) { throw Error("scheduler config '" + c.source + "': " + what); };
  if (c.numTrainTimesteps < 2) fail("num_train_timesteps must be at least 2");
  if (!(c.betaStart > 0 && c.betaEnd > c.betaStart && c.betaEnd < 1))
    fail("betas must satisfy 0 < beta_start < beta_end < 1, got " + std::to_string(c.betaStart) + " .. " +
         std::to_string(c.betaEnd));
  if (c.stepsOffset < 0) fail("steps_offset must not be negative");
}

}  // namespace sdgen::models
