#pragma once
// The pipeline's LoRA set (docs/lora.md): the LoRAs asked for (LoadOptions::loras, TextToImage::setLoras), those
// merged into the weights now (the last generation's, prompt tags included), and the merge itself: each change
// resolves the new set against the model's UNet and text encoder and re-merges in place (ParameterStore).
#include <string>
#include <vector>

#include "models/lora/lora_library.h"
#include "models/nn/parameters.h"
#include "models/prompt/lora_tags.h"
#include "models/weight_source.h"

namespace sdgen::pipeline {

class LoraSet {
 public:
  // The model's weights the LoRAs adapt (textEncoder2: SDXL's second text encoder, else null); `params` holds the
  // networks they merge into.
  LoraSet(nn::ParameterStore& params, const models::WeightSource& unet, const models::WeightSource* textEncoder,
          const models::WeightSource* textEncoder2, std::string loraDir);

  // Before the networks load: registers the LoRA components and the initial targets their load merges.
  void beginLoad(const std::vector<lora::LoraSpec>& loras);
  // After: every initial target was merged (else an error naming them).
  void finishLoad(const std::vector<lora::LoraSpec>& loras);

  // LoRA targets of `specs` against this model (each file read once; errors name the file and tensor and are
  // lora::LoraErrors: the model is untouched). `loaded`: the networks exist, so every target must be a weight
  // they merge into.
  lora::LoraTargets resolve(const std::vector<lora::LoraSpec>& specs, bool loaded = true);
  // The set of one generation: the base LoRAs plus the prompt's tags (looked up in the LoRA folder).
  std::vector<lora::LoraSpec> withTags(const std::vector<prompt::LoraTag>& tags);
  // Makes `specs` the merged set (nothing to do when it already is).
  void use(const std::vector<lora::LoraSpec>& specs);

  void setBase(const std::vector<lora::LoraSpec>& loras);  // checked first (resolve)
  void setDirectory(const std::string& dir) { library_.setDirectory(dir); }
  const std::vector<lora::LoraSpec>& merged() const { return merged_; }

 private:
  void checkMerged(const lora::LoraTargets& targets) const;

  nn::ParameterStore& params_;
  const models::WeightSource& unet_;
  const models::WeightSource* textEncoder_;  // null: the SDXL refiner (text_encoder_2 alone)
  const models::WeightSource* textEncoder2_;
  lora::LoraLibrary library_;
  std::vector<lora::LoraSpec> base_, merged_;  // asked for (without prompt tags); merged now
  bool mixed_ = false;  // a re-merge failed: the next generation re-merges whatever the set
};

}  // namespace sdgen::pipeline
