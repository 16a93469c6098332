// scheduler/scheduler_config.json -> SchedulerConfig. The noise schedule (num_train_timesteps, beta_start,
// beta_end, beta_schedule) is required: every scheduler class has defaults for it, but they are DDPM's
// (0.0001..0.02 linear), not Stable Diffusion's, so a file without them is almost surely wrong. The other
// fields take the defaults of the class the file names in _class_name, as diffusers does when it instantiates
// that class (and those values carry over when another sampler is built from its config).
#include <array>

#include "engine/error.h"
#include "models/config/config_files.h"
#include "models/config/config_json.h"

namespace sdgen::models {

namespace {

struct ClassDefaults {
  const char* name;
  const char* timestepSpacing;
  bool setAlphaToOne;
  bool clipSample;
};

// From the __init__ signatures of diffusers' schedulers (steps_offset defaults to 0 and prediction_type to
// "epsilon" in all of them).
constexpr std::array<ClassDefaults, 14> kClasses = {{
    {"PNDMScheduler", "leading", false, false},
    {"DDIMScheduler", "leading", true, true},
    {"DDPMScheduler", "leading", false, true},
    {"EulerDiscreteScheduler", "linspace", false, false},
    {"EulerAncestralDiscreteScheduler", "linspace", false, false},
    {"LMSDiscreteScheduler", "linspace", false, false},
    {"HeunDiscreteScheduler", "linspace", false, false},
    {"DPMSolverMultistepScheduler", "linspace", false, false},
    {"DPMSolverSinglestepScheduler", "linspace", false, false},
    {"DPMSolverSDEScheduler", "linspace", false, false},
    {"UniPCMultistepScheduler", "linspace", false, false},
    {"DEISMultistepScheduler", "linspace", false, false},
    {"KDPM2DiscreteScheduler", "linspace", false, false},
    {"KDPM2AncestralDiscreteScheduler", "linspace", false, false},
}};

const ClassDefaults* findClass(const std::string& name) {
  for (const ClassDefaults& c : kClasses)
    if (name == c.name) return &c;
  return nullptr;
}

SchedulerConfig fromJson(const ConfigJson& j) {
  SchedulerConfig c;
  c.source = j.file();
  c.numTrainTimesteps = j.integer("num_train_timesteps");
  c.betaStart = static_cast<float>(j.number("beta_start"));
  c.betaEnd = static_cast<float>(j.number("beta_end"));
  c.betaSchedule = j.string("beta_schedule");
  if (c.betaSchedule != "linear" && c.betaSchedule != "scaled_linear")
    j.unsupported("beta_schedule", "sdgen implements \"scaled_linear\" and \"linear\"");
  j.refuseIfSet("trained_betas", "explicit beta lists");
  j.refuseUnlessEquals("rescale_betas_zero_snr", false, "zero-terminal-SNR rescaling");
  j.refuseUnlessEquals("thresholding", false, "dynamic thresholding");
  j.refuseUnlessEquals("use_exponential_sigmas", false, "exponential sigma schedules");
  j.refuseUnlessEquals("use_beta_sigmas", false, "beta sigma schedules");
  j.refuseUnlessEquals("use_flow_sigmas", false, "flow-matching sigmas");
  j.refuseUnlessEquals("timestep_type", "discrete", "continuous timesteps");

  c.className = j.string("_class_name", "");
  const ClassDefaults* defaults = findClass(c.className);
  // Only the fields whose default differs between classes need the class.
  auto classDefault = [&](const char* field) -> const ClassDefaults& {
    if (!defaults)
      j.fail(field, std::string("is absent and _class_name ") +
                        (c.className.empty() ? "is missing" : "\"" + c.className + "\" is not a scheduler sdgen knows") +
                        ", so its default is unknown; give it explicitly");
    return *defaults;
  };
  c.predictionType = j.string("prediction_type", "epsilon");
  if (c.predictionType != "epsilon" && c.predictionType != "v_prediction")
    j.unsupported("prediction_type", "sdgen implements \"epsilon\" and \"v_prediction\"");
  c.stepsOffset = j.integer("steps_offset", 0);
  c.timestepSpacing = j.present("timestep_spacing") ? j.string("timestep_spacing")
                                                    : std::string(classDefault("timestep_spacing").timestepSpacing);
  if (c.timestepSpacing != "leading" && c.timestepSpacing != "trailing" && c.timestepSpacing != "linspace")
    j.unsupported("timestep_spacing", "sdgen implements \"leading\", \"trailing\" and \"linspace\"");
  c.setAlphaToOne = j.present("set_alpha_to_one") ? j.boolean("set_alpha_to_one")
                                                  : classDefault("set_alpha_to_one").setAlphaToOne;
  c.clipSample = j.present("clip_sample") ? j.boolean("clip_sample") : classDefault("clip_sample").clipSample;
  c.useKarrasSigmas = j.present("use_karras_sigmas") ? j.boolean("use_karras_sigmas") : false;
  validateSchedulerConfig(c);
  return c;
}

}  // namespace

SchedulerConfig loadSchedulerConfig(const std::string& path) { return fromJson(ConfigJson::load(path)); }
SchedulerConfig parseSchedulerConfig(const std::string& json, const std::string& file) {
  return fromJson(ConfigJson::parse(json, file));
}

void validateSchedulerConfig(const SchedulerConfig& c) {
  auto fail = [&](const std::string& what) { throw Error("scheduler config '" + c.source + "': " + what); };
  if (c.numTrainTimesteps < 2) fail("num_train_timesteps must be at least 2");
  if (!(c.betaStart > 0 && c.betaEnd > c.betaStart && c.betaEnd < 1))
    fail("betas must satisfy 0 < beta_start < beta_end < 1, got " + std::to_string(c.betaStart) + " .. " +
         std::to_string(c.betaEnd));
  if (c.stepsOffset < 0) fail("steps_offset must not be negative");
}

}  // namespace sdgen::models
