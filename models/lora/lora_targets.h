#pragma once
// Which weights of a model the chosen LoRAs change, and by how much: every module of every file matched to a
// weight of the UNet or the text encoder ("down_blocks.0.attentions.0.proj_in.weight"), its shapes checked,
// and scale * alpha / rank computed. A module that matches no weight of the model, or whose factors do not fit
// the weight's shape, is an error naming the file, the tensor and the model's shape: a LoRA made for another
// architecture (SD 1.x on SDXL, SDXL on SD 2.x, ...) is refused, not half applied. nn::ParameterStore merges the result on the device.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/error.h"
#include "models/lora/lora_file.h"
#include "models/weight_source.h"

namespace sdgen::lora {

// A LoRA set that cannot be used (a bad or missing file, a LoRA for another model, an unknown prompt tag): the
// model is untouched and stays usable with another set (a long-lived process keeps it loaded).
class LoraError : public Error {
 public:
  using Error::Error;
};

// A LoRA and its strengths (webui's <lora:NAME:TE:UNET> may differ per component; usually both are one value).
struct LoraChoice {
  std::shared_ptr<const LoraFile> file;
  float unetScale = 1.f, textScale = 1.f;
};

// One LoRA's update of one weight [out, in...]: W += scale * up . down, up [out, rank], down [rank, in...].
struct WeightDelta {
  std::shared_ptr<const std::vector<float>> up, down;
  int64_t rank = 0;
  float scale = 0;   // the user's scale * alpha / rank
  std::string what;  // "'FILE' module 'KEY'", for messages
};

class LoraTargets {
 public:
  // nullptr when no chosen LoRA changes the weight.
  const std::vector<WeightDelta>* find(Component c, const std::string& weightName) const;
  bool empty() const { return size() == 0; }
  size_t size() const {
    size_t n = 0;
    for (const auto& t : targets_) n += t.size();
    return n;
  }
  // Every (component, weight name) that some LoRA changes.
  const std::map<std::string, std::vector<WeightDelta>>& of(Component c) const { return targets_[int(c)]; }
  void add(Component c, const std::string& weightName, WeightDelta d) {
    targets_[int(c)][weightName].push_back(std::move(d));
  }

 private:
  std::map<std::string, std::vector<WeightDelta>> targets_[kComponents];
};

// Matches every module of every chosen file to the model (errors as above; all of a file's unknown modules are
// listed in one message). A choice whose scale is 0 for a component adds nothing there (so the model's weights
// stay bit-identical to no LoRA) but is still checked. `textEncoder`: the (first) text encoder, null for the SDXL
// refiner, whose one encoder is `textEncoder2`; `textEncoder2`: SDXL's second text encoder (null: the model has
// one); a LoRA for an encoder the model lacks is refused; the text scale applies to both encoders, as in webui. A kohya
// UNet module resolves under diffusers' names or LDM's (SDXL, models/lora/ldm_unet_names.h).
LoraTargets resolveLoras(const std::vector<LoraChoice>& choices, const models::WeightSource& unet,
                         const models::WeightSource* textEncoder,
                         const models::WeightSource* textEncoder2 = nullptr);

}  // namespace sdgen::lora
