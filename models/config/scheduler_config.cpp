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
  };
  return classes;
}
#undef SDGEN_COMMON_PARAMS

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

  if (takes(cls, "clip_sample")) {  // DDIM
    c.setAlphaToOne = j.boolean("set_alpha_to_one");
    // The pipeline's other shim: clip_sample true in the config becomes false, so whatever the file sets ends up
    // false; a defaulted true (DDIM's) is dropped by from_config and applies.
    c.clipSample = j.boolean("clip_sample") && !file.fields.count("clip_sample");
    c.clipSampleRange = j.number("clip_sample_range");
    if (!(c.clipSampleRange > 0)) j.fail("clip_sample_range", "must be positive");
  }
  if (takes(cls, "thresholding")) j.refuseUnlessEquals("thresholding", false, "dynamic thresholding" + by);
  // Euler types these `bool | None`: null reads as false, as Python's truth test does.
  auto flag = [&](const char* field) { return j.present(field) && j.boolean(field); };
  if (takes(cls, "use_karras_sigmas")) {  // Euler, DPM++
    c.useKarrasSigmas = flag("use_karras_sigmas");
    if (flag("use_exponential_sigmas")) j.unsupported("use_exponential_sigmas", "exponential sigma schedules" + by);
    if (flag("use_beta_sigmas")) j.unsupported("use_beta_sigmas", "beta sigma schedules" + by);
    j.refuseUnlessEquals("final_sigmas_type", "zero", "a final sigma other than 0" + by);
    c.sigmaMin = j.optionalNumber("sigma_min");
    c.sigmaMax = j.optionalNumber("sigma_max");
    if ((c.sigmaMin && !(*c.sigmaMin > 0)) || (c.sigmaMax && !(*c.sigmaMax > c.sigmaMin.value_or(0))))
      j.fail(c.sigmaMin && !(*c.sigmaMin > 0) ? "sigma_min" : "sigma_max",
             "must satisfy 0 < sigma_min < sigma_max where given");
  }
  if (takes(cls, "interpolation_type")) {  // Euler
    j.refuseUnlessEquals("interpolation_type", "linear", "log-linear sigma interpolation" + by);
    j.refuseUnlessEquals("timestep_type", "discrete", "continuous timesteps" + by);
  }
  if (takes(cls, "solver_order")) {  // DPM++ 2M
    j.refuseUnlessEquals("solver_order", 2, "sdgen's DPM++ 2M is of order 2" + by);
    j.refuseUnlessEquals("algorithm_type", "dpmsolver++", "sdgen's DPM++ 2M is \"dpmsolver++\"" + by);
    j.refuseUnlessEquals("solver_type", "midpoint", "sdgen's DPM++ 2M uses the \"midpoint\" update" + by);
    j.boolean("lower_order_final");  // with final sigma 0 the last step is first order either way
    j.boolean("euler_at_final");
    j.refuseUnlessEquals("use_lu_lambdas", false, "uniform-lambda steps" + by);
    j.refuseUnlessEquals("use_flow_sigmas", false, "flow-matching sigmas" + by);
    j.refuseUnlessEquals("use_dynamic_shifting", false, "dynamic shifting" + by);
    j.refuseIfSet("variance_type", "learned variances" + by);
    const json& lambda = j.raw("lambda_min_clipped");
    if (!lambda.is_number() || !std::isinf(lambda.get<double>()) || lambda.get<double>() > 0)
      j.unsupported("lambda_min_clipped", "sdgen clips no lambda (-Infinity)" + by);
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
