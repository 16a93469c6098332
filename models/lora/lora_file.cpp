#include "models/lora/lora_file.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "engine/error.h"
#include "models/json_bounds.h"
#include "models/safetensors.h"

namespace sdgen::lora {

using models::formatShape;
using models::isFloatDType;
using models::SafetensorsFile;
using models::TensorInfo;
using models::tensorDTypeName;

namespace {

constexpr int64_t kMaxRank = 4096;  // kohya/PEFT ranks in the wild are <= 1024; larger is not a LoRA

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

struct Parts {
  Component component = Component::Unet;
  std::string key;
  const TensorInfo* up = nullptr;
  const TensorInfo* down = nullptr;
  const TensorInfo* alpha = nullptr;
};

[[noreturn]] void refuse(const std::string& path, const std::string& tensor, const std::string& why) {
  throw Error("LoRA '" + path + "': tensor '" + tensor + "': " + why);
}

// Names of LyCORIS and other adapter variants, for a message better than "unknown tensor".
std::optional<std::string> unsupportedVariant(std::string_view suffix) {
  if (startsWith(suffix, "hada_")) return "LoHa (hada_*) is not supported, only LoRA and LoCon";
  if (startsWith(suffix, "lokr_")) return "LoKr (lokr_*) is not supported, only LoRA and LoCon";
  if (suffix == "dora_scale" || endsWith(suffix, "lora_magnitude_vector"))
    return "DoRA (weight-decomposed LoRA) is not supported";
  if (startsWith(suffix, "lora_mid")) return "LoCon with a Tucker mid tensor (lora_mid) is not supported";
  if (suffix == "diff" || suffix == "diff_b" || suffix == "on_input" || startsWith(suffix, "oft_") ||
      startsWith(suffix, "ia3"))
    return "this LyCORIS variant is not supported, only LoRA and LoCon";
  if (endsWith(suffix, ".bias")) return "LoRA biases are not supported";
  return std::nullopt;
}

// Kohya: "lora_unet_X.suffix" / "lora_te_X.suffix" (SDXL's lora_te1_ is its first, CLIP-L, text encoder).
void addKohya(const std::string& path, const TensorInfo& t, std::map<std::string, Parts>& modules) {
  const std::string& name = t.name;
  const size_t dot = name.find('.');
  if (dot == std::string::npos) refuse(path, name, "not a LoRA tensor name (no '.suffix')");
  const std::string module = name.substr(0, dot), suffix = name.substr(dot + 1);
  Component c;
  if (startsWith(module, "lora_unet_"))
    c = Component::Unet;
  else if (startsWith(module, "lora_te_") || startsWith(module, "lora_te1_"))
    c = Component::TextEncoder;
  else if (startsWith(module, "lora_te2_"))
    c = Component::TextEncoder2;
  else
    refuse(path, name, "not a kohya LoRA name (lora_unet_*, lora_te_*, lora_te1_* or lora_te2_*)");
  Parts& p = modules[module];
  p.component = c;
  p.key = module;
  if (suffix == "lora_down.weight")
    p.down = &t;
  else if (suffix == "lora_up.weight")
    p.up = &t;
  else if (suffix == "alpha")
    p.alpha = &t;
  else if (auto why = unsupportedVariant(suffix))
    refuse(path, name, *why);
  else
    refuse(path, name, "unknown LoRA tensor (expected .lora_down.weight, .lora_up.weight or .alpha)");
}

const char* peftPrefix(Component c) {
  return c == Component::Unet ? "unet." : c == Component::TextEncoder ? "text_encoder." : "text_encoder_2.";
}

// PEFT: "unet.X.lora_A.weight" / "text_encoder.X.lora_B.weight" / "text_encoder_2.X.lora_A.weight".
void addPeft(const std::string& path, const TensorInfo& t, std::map<std::string, Parts>& modules) {
  const std::string& name = t.name;
  Component c;
  std::string rest;
  if (startsWith(name, "unet.")) {
    c = Component::Unet;
    rest = name.substr(5);
  } else if (startsWith(name, "text_encoder.")) {
    c = Component::TextEncoder;
    rest = name.substr(13);
  } else if (startsWith(name, "text_encoder_2.")) {
    c = Component::TextEncoder2;
    rest = name.substr(15);
  } else {
    refuse(path, name, "not a PEFT LoRA name (unet.*, text_encoder.* or text_encoder_2.*)");
  }
  const bool isDown = endsWith(rest, ".lora_A.weight");
  std::string module;
  if (isDown || endsWith(rest, ".lora_B.weight")) {
    module = rest.substr(0, rest.size() - 14);
  } else if (auto why = unsupportedVariant(rest.substr(rest.rfind('.') + 1))) {
    refuse(path, name, *why);
  } else if (rest.find("_lora.down.") != std::string::npos || rest.find("_lora.up.") != std::string::npos ||
             rest.find(".processor.") != std::string::npos) {
    refuse(path, name, "the old diffusers attention-processor LoRA layout is not supported (save it again "
                       "with a current diffusers, which writes lora_A/lora_B)");
  } else {
    refuse(path, name, "unknown LoRA tensor (expected .lora_A.weight or .lora_B.weight)");
  }
  // transformers 5 saves CLIPTextModel's names without the "text_model." level; sdgen's names have it.
  // (CLIPTextModelWithProjection's text_projection sits beside text_model.)
  if (c != Component::Unet && !startsWith(module, "text_model.") && module != "text_projection")
    module = "text_model." + module;
  const std::string id = std::string(peftPrefix(c)) + module;
  Parts& p = modules[id];
  p.component = c;
  p.key = module;
  (isDown ? p.down : p.up) = &t;
}

// diffusers' LoRA adapter metadata (LoraConfig fields under "unet." / "text_encoder." / "text_encoder_2."): the
// alpha of a PEFT file.
struct PeftConfig {
  std::optional<double> alpha, rank;
};
PeftConfig peftConfig(const SafetensorsFile& f, Component c) {
  PeftConfig cfg;
  auto it = f.metadata().find("lora_adapter_metadata");
  if (it == f.metadata().end()) return cfg;
  nlohmann::json j;
  try {
    j = models::parseJsonBounded(it->second, "LoRA '" + f.path() + "': lora_adapter_metadata");
  } catch (const nlohmann::json::exception&) {
    j = nlohmann::json::value_t::discarded;
  }
  if (!j.is_object()) throw Error("LoRA '" + f.path() + "': lora_adapter_metadata is not a JSON object");
  const std::string p = peftPrefix(c);
  auto number = [&](const char* field) -> std::optional<double> {
    auto v = j.find(p + field);
    if (v == j.end() || v->is_null()) return std::nullopt;
    if (!v->is_number())
      throw Error("LoRA '" + f.path() + "': lora_adapter_metadata " + p + field + " is not a number");
    return v->get<double>();
  };
  auto refuseIf = [&](const char* field, bool bad, const char* why) {
    if (bad) throw Error("LoRA '" + f.path() + "': lora_adapter_metadata " + p + field + ": " + why);
  };
  for (const char* pattern : {"rank_pattern", "alpha_pattern"}) {
    auto v = j.find(p + pattern);
    refuseIf(pattern, v != j.end() && !v->is_null() && !v->empty(), "per-module ranks or alphas are not supported");
  }
  for (const char* flag : {"use_rslora", "use_dora"}) {
    auto v = j.find(p + flag);
    refuseIf(flag, v != j.end() && v->is_boolean() && v->get<bool>(), "is not supported");
  }
  cfg.alpha = number("lora_alpha");
  cfg.rank = number("r");
  return cfg;
}

std::vector<float> readFactor(const SafetensorsFile& f, const TensorInfo& t) {
  if (!isFloatDType(t.dtype))
    refuse(f.path(), t.name, std::string("dtype ") + tensorDTypeName(t.dtype) + " (F32, F16 or BF16 expected)");
  return f.readAsF32(t.name);
}

LoraModule finish(const SafetensorsFile& f, const Parts& p, bool kohya, const PeftConfig& cfg) {
  const std::string& path = f.path();
  if (!p.down) refuse(path, p.up->name, "has no matching down/lora_A tensor");
  if (!p.up) refuse(path, p.down->name, "has no matching up/lora_B tensor");
  if (!kohya && p.alpha) refuse(path, p.alpha->name, "alpha in a PEFT file");
  LoraModule m;
  m.component = p.component;
  m.key = p.key;
  m.kohya = kohya;
  m.upName = p.up->name;
  m.downName = p.down->name;
  m.upShape = p.up->shape;
  m.downShape = p.down->shape;
  const auto& u = m.upShape;
  const auto& d = m.downShape;
  if (!(u.size() == 2 || (u.size() == 4 && u[2] == 1 && u[3] == 1)))
    refuse(path, m.upName, "has shape " + formatShape(u) + ", expected [out, rank] or [out, rank, 1, 1]");
  if (d.size() != 2 && d.size() != 4)
    refuse(path, m.downName, "has shape " + formatShape(d) + ", expected [rank, in] or [rank, in, kh, kw]");
  if (u[1] != d[0])
    refuse(path, m.upName, "has rank " + std::to_string(u[1]) + " (shape " + formatShape(u) + ") but '" + m.downName +
                               "' has rank " + std::to_string(d[0]) + " (shape " + formatShape(d) + ")");
  m.rank = d[0];
  if (m.rank < 1 || m.rank > kMaxRank)
    refuse(path, m.downName, "rank " + std::to_string(m.rank) + " is outside [1, " + std::to_string(kMaxRank) + "]");
  if (p.alpha) {
    if (p.alpha->elementCount() != 1)
      refuse(path, p.alpha->name, "alpha has shape " + formatShape(p.alpha->shape) + ", expected a scalar");
    m.alpha = readFactor(f, *p.alpha)[0];
    if (!std::isfinite(m.alpha)) refuse(path, p.alpha->name, "alpha is not finite");
  } else if (!kohya && cfg.alpha) {
    if (cfg.rank && *cfg.rank != double(m.rank))
      refuse(path, m.downName, "rank " + std::to_string(m.rank) + " differs from the adapter metadata's r " +
                                   std::to_string(*cfg.rank));
    m.alpha = static_cast<float>(*cfg.alpha);
  } else {
    m.alpha = static_cast<float>(m.rank);  // kohya without alphas, PEFT without metadata: scale 1
  }
  m.up = std::make_shared<const std::vector<float>>(readFactor(f, *p.up));
  m.down = std::make_shared<const std::vector<float>>(readFactor(f, *p.down));
  return m;
}

}  // namespace

const char* componentName(Component c) {
  return c == Component::Unet ? "UNet" : c == Component::TextEncoder ? "text encoder" : "text encoder 2";
}

std::shared_ptr<const LoraFile> readLoraFile(const std::string& path) {
  SafetensorsFile f = SafetensorsFile::open(path);
  const std::vector<std::string> names = f.names();
  if (names.empty()) throw Error("LoRA '" + path + "' holds no tensors");
  const bool kohya = startsWith(names.front(), "lora_");
  std::map<std::string, Parts> parts;
  for (const std::string& n : names) {
    const TensorInfo& t = f.get(n);
    if (startsWith(n, "lora_") != kohya)
      refuse(path, n, std::string("mixes the kohya and PEFT layouts (the file's first tensor is '") + names.front() +
                          "')");
    if (kohya)
      addKohya(path, t, parts);
    else
      addPeft(path, t, parts);
  }
  // Kohya files give every module an alpha or none (then alpha = rank); some-but-not-all is a broken file:
  // webui and diffusers would silently merge those modules at another strength.
  size_t withAlpha = 0;
  for (const auto& [id, p] : parts) withAlpha += p.alpha != nullptr;
  auto out = std::make_shared<LoraFile>();
  out->path = path;
  out->layout = kohya ? "kohya" : "PEFT";
  PeftConfig cfg[kComponents];
  if (!kohya)
    for (int c = 0; c < kComponents; ++c) cfg[c] = peftConfig(f, Component(c));
  for (const auto& [id, p] : parts) {
    if (kohya && withAlpha > 0 && !p.alpha) {
      const std::string first = p.down ? p.down->name : p.up->name;
      refuse(path, first, "has no '" + p.key + ".alpha' while " + std::to_string(withAlpha) + " of the file's " +
                              std::to_string(parts.size()) + " modules have one");
    }
    if (kohya && !p.down && !p.up) refuse(path, p.alpha->name, "an alpha without lora_down/lora_up weights");
    out->modules.push_back(finish(f, p, kohya, cfg[int(p.component)]));
  }
  return out;
}

}  // namespace sdgen::lora
