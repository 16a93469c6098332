#include "models/sampling/sampler_kind.h"

#include <iterator>
#include <string>

namespace sdgen::sampling {

namespace {
struct Names {
  SamplerKind kind;
  const char* flag;
  const char* display;  // stable-diffusion-webui's name
  const char* diffusersClass;
};
constexpr Names kNames[] = {
    {SamplerKind::Ddim, "ddim", "DDIM", "DDIMScheduler"},
    {SamplerKind::Euler, "euler", "Euler", "EulerDiscreteScheduler"},
    {SamplerKind::EulerAncestral, "euler_a", "Euler a", "EulerAncestralDiscreteScheduler"},
    {SamplerKind::DpmPP2M, "dpmpp_2m", "DPM++ 2M", "DPMSolverMultistepScheduler"},
    {SamplerKind::Heun, "heun", "Heun", "HeunDiscreteScheduler"},
    {SamplerKind::Dpm2, "dpm2", "DPM2", "KDPM2DiscreteScheduler"},
    {SamplerKind::Dpm2Ancestral, "dpm2_a", "DPM2 a", "KDPM2AncestralDiscreteScheduler"},
    {SamplerKind::DpmPP2SAncestral, "dpmpp_2s_a", "DPM++ 2S a", "DPMSolverSinglestepScheduler"},
    {SamplerKind::DpmPPSde, "dpmpp_sde", "DPM++ SDE", "DPMSolverSDEScheduler"},
    {SamplerKind::DpmPP2MSde, "dpmpp_2m_sde", "DPM++ 2M SDE", "DPMSolverMultistepScheduler"},
    {SamplerKind::Lms, "lms", "LMS", "LMSDiscreteScheduler"},
    {SamplerKind::UniPC, "unipc", "UniPC", "UniPCMultistepScheduler"},
    {SamplerKind::Lcm, "lcm", "LCM", "LCMScheduler"},
};

constexpr SamplerKind kAll[] = {SamplerKind::Euler,         SamplerKind::EulerAncestral, SamplerKind::Heun,
                                SamplerKind::Dpm2,          SamplerKind::Dpm2Ancestral,  SamplerKind::DpmPP2SAncestral,
                                SamplerKind::DpmPP2M,       SamplerKind::DpmPPSde,       SamplerKind::DpmPP2MSde,
                                SamplerKind::Lms,           SamplerKind::Ddim,           SamplerKind::UniPC,
                                SamplerKind::Lcm};
static_assert(std::size(kAll) == std::size(kNames));

const Names* find(SamplerKind kind) {
  for (const auto& n : kNames)
    if (n.kind == kind) return &n;
  return nullptr;
}
}  // namespace

const SamplerKind* allSamplerKinds(size_t* count) {
  *count = std::size(kAll);
  return kAll;
}

const char* samplerFlagName(SamplerKind kind) {
  const Names* n = find(kind);
  return n ? n->flag : "?";
}

std::optional<SamplerKind> parseSamplerKind(std::string_view flagName) {
  for (const auto& n : kNames)
    if (flagName == n.flag) return n.kind;
  return std::nullopt;
}

std::string samplerDisplayName(SamplerKind kind, bool karras) {
  const Names* n = find(kind);
  return n ? std::string(n->display) + (karras ? " Karras" : "") : "?";
}

const char* diffusersSchedulerClass(SamplerKind kind) {
  const Names* n = find(kind);
  return n ? n->diffusersClass : "?";
}

bool samplerTakesKarras(SamplerKind kind) { return kind != SamplerKind::Ddim && kind != SamplerKind::Lcm; }

bool samplerTakesExponential(SamplerKind kind) {
  return kind == SamplerKind::Euler || kind == SamplerKind::Heun || kind == SamplerKind::Dpm2 ||
         kind == SamplerKind::Dpm2Ancestral || kind == SamplerKind::Lms || kind == SamplerKind::DpmPPSde;
}

const char* samplerFlagNames() {
  return "ddim, euler, euler_a, dpmpp_2m, heun, dpm2, dpm2_a, dpmpp_2s_a, dpmpp_sde, dpmpp_2m_sde, lms, unipc, lcm";
}

}  // namespace sdgen::sampling
