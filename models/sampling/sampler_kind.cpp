#include "models/sampling/sampler_kind.h"

namespace sdgen::sampling {

namespace {
struct Names {
  SamplerKind kind;
  const char* flag;
  const char* display;
  const char* diffusersClass;
};
constexpr Names kNames[] = {{SamplerKind::Ddim, "ddim", "DDIM", "DDIMScheduler"},
                            {SamplerKind::Euler, "euler", "Euler", "EulerDiscreteScheduler"},
                            {SamplerKind::EulerAncestral, "euler_a", "Euler a", "EulerAncestralDiscreteScheduler"},
                            {SamplerKind::DpmPP2M, "dpmpp_2m", "DPM++ 2M", "DPMSolverMultistepScheduler"}};
}  // namespace

const char* samplerFlagName(SamplerKind kind) {
  for (const auto& n : kNames)
    if (n.kind == kind) return n.flag;
  return "?";
}

std::optional<SamplerKind> parseSamplerKind(std::string_view flagName) {
  for (const auto& n : kNames)
    if (flagName == n.flag) return n.kind;
  return std::nullopt;
}

std::string samplerDisplayName(SamplerKind kind, bool karras) {
  for (const auto& n : kNames)
    if (n.kind == kind) return std::string(n.display) + (karras ? " Karras" : "");
  return "?";
}

const char* diffusersSchedulerClass(SamplerKind kind) {
  for (const auto& n : kNames)
    if (n.kind == kind) return n.diffusersClass;
  return "?";
}

const char* samplerFlagNames() { return "ddim, euler, euler_a, dpmpp_2m"; }

}  // namespace sdgen::sampling
