#include "models/lora/lora_targets.h"

#include <unordered_map>

#include "engine/error.h"
#include "models/lora/ldm_unet_names.h"
#include "models/safetensors.h"

namespace sdgen::lora {

using models::formatShape;

namespace {

constexpr size_t kListedUnknown = 8;  // modules named in an "unknown modules" message

// Kohya spells a module "lora_unet_" + its name with every '.' as '_': the model's own weight names decide
// which name that was (sd-scripts builds the key the same way from the module it adapts).
class KohyaNames {
 public:
  // ldm: also the UNet's LDM module names (SDXL's kohya LoRAs name its modules so).
  KohyaNames(const models::WeightSource& source, const std::string& prefix, bool ldm = false) {
    const std::vector<std::string> names = source.names();
    for (const std::string& n : names)
      if (n.size() >= 7 && n.compare(n.size() - 7, 7, ".weight") == 0) add(prefix, n.substr(0, n.size() - 7), n);
    if (ldm)
      for (const auto& [module, weight] : ldmUnetModules(names)) add(prefix, module, weight);
  }
  const std::string* find(const std::string& key) const {
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }

 private:
  void add(const std::string& prefix, const std::string& module, const std::string& weight) {
    std::string key = prefix + module;
    for (size_t i = prefix.size(); i < key.size(); ++i)
      if (key[i] == '.') key[i] = '_';
    map_.emplace(std::move(key), weight);
  }
  std::unordered_map<std::string, std::string> map_;
};

int64_t product(const std::vector<int64_t>& s, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < s.size(); ++i) p *= s[i];
  return p;
}

// The module's factors must fit the weight: up [out, rank(, 1, 1)], down [rank, in(, kh, kw)] with in*kh*kw the
// weight's (a linear LoRA of a 1x1 conv, or the reverse, is the same product).
void checkShapes(const LoraFile& f, const LoraModule& m, const std::string& weight, const std::vector<int64_t>& w) {
  const bool fits = w.size() >= 2 && m.upShape[0] == w[0] && product(m.downShape, 1) == product(w, 1) &&
                    (m.downShape.size() != 4 || w.size() != 4 || (m.downShape[2] == w[2] && m.downShape[3] == w[3]));
  if (!fits)
    throw Error("LoRA '" + f.path + "': '" + m.downName + "' " + formatShape(m.downShape) + " and '" + m.upName +
                "' " + formatShape(m.upShape) + " do not fit the model's " + componentName(m.component) +
                " weight '" + weight + "' " + formatShape(w) + ": a LoRA for another model?");
}

}  // namespace

const std::vector<WeightDelta>* LoraTargets::find(Component c, const std::string& weightName) const {
  const auto& t = targets_[int(c)];
  auto it = t.find(weightName);
  return it == t.end() ? nullptr : &it->second;
}

LoraTargets resolveLoras(const std::vector<LoraChoice>& choices, const models::WeightSource& unet,
                         const models::WeightSource* textEncoder, const models::WeightSource* textEncoder2) {
  LoraTargets out;
  const models::WeightSource* sources[kComponents] = {&unet, textEncoder, textEncoder2};
  static const char* const kohyaPrefix[kComponents] = {"lora_unet_", "lora_te_", "lora_te2_"};
  std::unique_ptr<KohyaNames> kohya[kComponents];
  for (const LoraChoice& choice : choices) {
    const LoraFile& f = *choice.file;
    std::vector<std::string> unknown;
    for (const LoraModule& m : f.modules) {
      const int c = int(m.component);
      if (!sources[c])
        throw Error("LoRA '" + f.path + "': '" + m.downName +
                    (m.component == Component::TextEncoder2
                         ? "' adapts a second text encoder (SDXL's), which this model does not have: a LoRA for SDXL?"
                         : "' adapts a first text encoder (CLIP ViT-L), which this model does not have: the SDXL "
                           "refiner has only the second (text_encoder_2, lora_te2_); a LoRA for the SDXL base?"));
      const models::WeightSource& source = *sources[c];
      std::string weight;
      if (m.kohya) {
        auto& names = kohya[c];
        if (!names) names = std::make_unique<KohyaNames>(source, kohyaPrefix[c], m.component == Component::Unet);
        std::string key = m.key;
        if (key.rfind("lora_te1_", 0) == 0) key = "lora_te_" + key.substr(9);
        if (const std::string* n = names->find(key)) weight = *n;
      } else if (source.contains(m.key + ".weight")) {
        weight = m.key + ".weight";
      }
      if (weight.empty()) {
        unknown.push_back(m.key);
        continue;
      }
      checkShapes(f, m, weight, source.shape(weight));
      const float scale = m.component == Component::Unet ? choice.unetScale : choice.textScale;
      if (scale == 0.f) continue;  // no LoRA at all for this weight: bit-identical to the model without it
      out.add(m.component, weight,
              {m.up, m.down, m.rank, scale * m.alpha / float(m.rank), "'" + f.path + "' module '" + m.key + "'"});
    }
    if (!unknown.empty()) {
      std::string list;
      for (size_t i = 0; i < unknown.size() && i < kListedUnknown; ++i) list += (i ? ", " : "") + unknown[i];
      if (unknown.size() > kListedUnknown) list += ", ...";
      throw Error("LoRA '" + f.path + "' (" + f.layout + " layout): " + std::to_string(unknown.size()) + " of its " +
                  std::to_string(f.modules.size()) + " modules match no weight of this model (" + list +
                  "): a LoRA for another model (SD 2.x, SDXL) or an unsupported naming");
    }
  }
  return out;
}

}  // namespace sdgen::lora
