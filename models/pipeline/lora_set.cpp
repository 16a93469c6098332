#include "models/pipeline/lora_set.h"

#include "engine/error.h"

namespace sdgen::pipeline {

LoraSet::LoraSet(nn::ParameterStore& params, const models::WeightSource& unet, const models::WeightSource* textEncoder,
                 const models::WeightSource* textEncoder2, std::string loraDir)
    : params_(params), unet_(unet), textEncoder_(textEncoder), textEncoder2_(textEncoder2),
      library_(std::move(loraDir)) {}

void LoraSet::beginLoad(const std::vector<lora::LoraSpec>& loras) {
  params_.setLoraComponent(unet_, lora::Component::Unet);
  if (textEncoder_) params_.setLoraComponent(*textEncoder_, lora::Component::TextEncoder);
  if (textEncoder2_) params_.setLoraComponent(*textEncoder2_, lora::Component::TextEncoder2);
  params_.setLoras(resolve(loras, false));
}

void LoraSet::finishLoad(const std::vector<lora::LoraSpec>& loras) {
  checkMerged(params_.loras());
  base_ = merged_ = loras;
}

lora::LoraTargets LoraSet::resolve(const std::vector<lora::LoraSpec>& specs, bool loaded) {
  try {
    const auto chosen = library_.choose(specs);
    lora::LoraTargets t = lora::resolveLoras(chosen, unet_, textEncoder_, textEncoder2_);
    if (loaded) checkMerged(t);
    return t;
  } catch (const lora::LoraError&) {
    throw;
  } catch (const Error& e) {
    throw lora::LoraError(e.what());
  }
}

// Every target is a weight the networks loaded (not a norm, an embedding, ...).
void LoraSet::checkMerged(const lora::LoraTargets& targets) const {
  std::vector<std::string> missed = params_.unmergedLoraTargets(targets);
  if (missed.empty()) return;
  std::string list;
  for (size_t i = 0; i < missed.size() && i < 8; ++i) list += (i ? ", " : "") + missed[i];
  throw Error("LoRA: " + std::to_string(missed.size()) + " adapted weights are not ones sdgen merges into (" + list +
              (missed.size() > 8 ? ", ...)" : ")"));
}

std::vector<lora::LoraSpec> LoraSet::withTags(const std::vector<prompt::LoraTag>& tags) {
  std::vector<lora::LoraSpec> loras = base_;
  try {
    for (const prompt::LoraTag& t : tags) loras.push_back({library_.findByName(t.name, t.text), t.unetScale, t.textScale});
  } catch (const Error& e) {
    throw lora::LoraError(e.what());
  }
  return loras;
}

void LoraSet::use(const std::vector<lora::LoraSpec>& specs) {
  if (specs == merged_ && !mixed_) return;
  lora::LoraTargets targets = resolve(specs);
  mixed_ = true;  // until the re-packing succeeds (a failure leaves some weights old, some new)
  params_.remergeLoras(std::move(targets));
  merged_ = specs;
  mixed_ = false;
  library_.keepOnly({&merged_, &base_});
}

void LoraSet::setBase(const std::vector<lora::LoraSpec>& loras) {
  resolve(loras);  // checked now
  base_ = loras;
}

}  // namespace sdgen::pipeline
