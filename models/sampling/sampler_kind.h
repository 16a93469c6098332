#pragma once
// The samplers sdgen offers, with the names the command line accepts and the names stable-diffusion-webui
// writes into PNG metadata.
#include <optional>
#include <string>
#include <string_view>

namespace sdgen::sampling {

enum class SamplerKind {
  Ddim,
  Euler,
  EulerAncestral,
  DpmPP2M,
  Heun,
  Dpm2,
  Dpm2Ancestral,
  DpmPP2SAncestral,
  DpmPPSde,
  DpmPP2MSde,
  Lms,
  UniPC,
  Lcm,
};

// Every kind, in the order menus list them.
const SamplerKind* allSamplerKinds(size_t* count);

// "ddim", "euler", "euler_a", "dpmpp_2m", "heun", "dpm2", "dpm2_a", "dpmpp_2s_a", "dpmpp_sde", "dpmpp_2m_sde",
// "lms", "unipc", "lcm"
const char* samplerFlagName(SamplerKind kind);
std::optional<SamplerKind> parseSamplerKind(std::string_view flagName);
// "DDIM", "Euler", "Euler a", "DPM++ 2M", "Heun", "DPM2", "DPM2 a", "DPM++ 2S a", "DPM++ SDE", "DPM++ 2M SDE",
// "LMS", "UniPC", "LCM" (+ " Karras" when karras): stable-diffusion-webui's spelling
std::string samplerDisplayName(SamplerKind kind, bool karras);
// The diffusers scheduler class each sampler reproduces (e.g. "HeunDiscreteScheduler"): models::schedulerConfigFor
// resolves a model's scheduler file for it.
const char* diffusersSchedulerClass(SamplerKind kind);
// Whether the sampler has a Karras-sigma variant (all but DDIM and LCM).
bool samplerTakesKarras(SamplerKind kind);
// Whether diffusers' scheduler class for it takes use_exponential_sigmas with the interpolated-sigma schedule
// sdgen implements (euler, heun, dpm2, dpm2_a, lms, dpmpp_sde).
bool samplerTakesExponential(SamplerKind kind);
// "ddim, euler, euler_a, ..." for usage messages
const char* samplerFlagNames();

}  // namespace sdgen::sampling
