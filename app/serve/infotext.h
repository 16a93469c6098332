#pragma once
// Reading back the "parameters" text (app/generation_params.h writes it) the way webui's
// parse_generation_parameters does, for POST /sdapi/v1/png-info: {"Prompt", "Negative prompt", "Steps": "20",
// "Sampler": "Euler a", ..., "Size-1": "512", "Size-2": "512"}. Values stay strings, as webui leaves them.
#include <nlohmann/json.hpp>
#include <string_view>

namespace sdgen::serve {

nlohmann::json parseInfotext(std::string_view text);

}  // namespace sdgen::serve
