#pragma once
// The request of one diffusers pipeline call as a reference fixture records its arguments (tests/reference/*.py:
// prompt, negative_prompt (null: none), num_inference_steps, guidance_scale, seed, width, height): the fields every
// parity test sets the same way; each test adds its sampler, images and the rest.
#include <nlohmann/json.hpp>

#include "models/pipeline/text_to_image.h"

namespace sdgen::test {

inline pipeline::GenerationRequest diffusersRequest(const nlohmann::json& args) {
  pipeline::GenerationRequest req;
  req.prompt = args.at("prompt");
  const nlohmann::json& negative = args.at("negative_prompt");
  req.negativePrompt = negative.is_null() ? "" : negative.get<std::string>();
  req.steps = args.at("num_inference_steps");
  req.cfgScale = args.at("guidance_scale");
  req.seed = args.at("seed");
  if (args.contains("width")) req.width = args.at("width");
  if (args.contains("height")) req.height = args.at("height");
  return req;
}

}  // namespace sdgen::test
