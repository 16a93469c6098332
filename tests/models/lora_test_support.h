#pragma once
// Shared by the LoRA pipeline tests (lora_pipeline_test.cpp, lora_sdxl_test.cpp): LoRA files written for every
// linear and conv weight of a model component, and the component's weights with those LoRAs merged in double
// (the float64 reference the device merge must render the same images from).
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "models/weight_source.h"
#include "tests/models/formats_synthetic.h"

namespace sdgen::test {

struct Factors {
  std::vector<int64_t> weightShape;
  std::vector<float> up, down;  // [out, rank], [rank, in...]
  int64_t rank = 0;
  float alpha = 0;
};
// By "COMPONENT/NAME.weight" (COMPONENT: unet, text_encoder, text_encoder_2).
using LoraWeights = std::map<std::string, Factors>;

// The kohya key of a module ("down_blocks.0.resnets.0.conv1" -> prefix + "down_blocks_0_resnets_0_conv1").
std::string kohyaKey(const std::string& prefix, std::string module);
// A module name -> its kohya key (empty function: the PEFT layout, COMPONENT.MODULE.lora_A/B.weight).
using KohyaKey = std::function<std::string(const std::string& module)>;

// A LoRA for every 2-D and 4-D weight of the component (embeddings and text_projection excepted), values fp16-exact, added to `w` and
// recorded in `out`. Kohya modules get .alpha (F16); PEFT ones none (alpha = rank is the caller's `alpha`).
void addLoraComponent(const models::WeightSource& source, const std::string& component, const KohyaKey& kohya,
                      int64_t rank, float alpha, std::mt19937& rng, SafetensorsWriter& w, LoraWeights& out);

// `file` (a diffusers component's safetensors) rewritten in F32 with the LoRAs merged in double.
void writeMergedLoras(const std::string& file, const std::string& component,
                      const std::vector<std::pair<const LoraWeights*, float>>& loras);

double meanAbs(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace sdgen::test
