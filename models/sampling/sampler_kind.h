#pragma once
// The samplers sdgen offers, with the names the command line accepts and the names stable-diffusion-webui
// writes into PNG metadata.
#include <optional>
#include <string>
#include <string_view>

namespace sdgen::sampling {

enum class SamplerKind { Ddim, Euler, EulerAncestral, DpmPP2M };

// "ddim", "euler", "euler_a", "dpmpp_2m"
const char* samplerFlagName(SamplerKind kind);
std::optional<SamplerKind> parseSamplerKind(std::string_view flagName);
// "DDIM", "Euler", "Euler a", "DPM++ 2M" (+ " Karras" when karras): stable-diffusion-webui's spelling
std::string samplerDisplayName(SamplerKind kind, bool karras);
// The diffusers scheduler class each sampler reproduces ("DDIMScheduler", "EulerDiscreteScheduler",
// "EulerAncestralDiscreteScheduler", "DPMSolverMultistepScheduler"): models::schedulerConfigFor resolves a
// model's scheduler file for it.
const char* diffusersSchedulerClass(SamplerKind kind);
// "ddim, euler, euler_a, dpmpp_2m" for usage messages
const char* samplerFlagNames();

}  // namespace sdgen::sampling
