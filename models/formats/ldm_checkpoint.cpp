#include "models/formats/ldm_checkpoint.h"

#include <map>

#include "engine/error.h"
#include "models/formats/ldm_components.h"

namespace sdgen::models {

namespace {

constexpr const char* kUNetPrefix = "model.diffusion_model.";
constexpr const char* kVaePrefix = "first_stage_model.";
constexpr const char* kClipPrefix = "cond_stage_model.transformer.";
constexpr const char* kOpenClipPrefix = "cond_stage_model.model.";
constexpr const char* kXlClipPrefix = "conditioner.embedders.0.transformer.";
constexpr const char* kXlOpenClipPrefix = "conditioner.embedders.1.model.";
constexpr const char* kRefinerOpenClipPrefix = "conditioner.embedders.0.model.";

bool anyKeyStartsWith(const std::vector<std::string>& keys, const std::string& prefix) {
  for (const std::string& k : keys)
    if (k.starts_with(prefix)) return true;
  return false;
}

// "model (1680 tensors), first_stage_model (248), ..." for the message of an unknown file.
std::string topLevelSummary(const std::vector<std::string>& keys) {
  std::map<std::string, int> counts;
  for (const std::string& k : keys) ++counts[k.substr(0, k.find('.'))];
  std::string s;
  int shown = 0;
  for (const auto& [prefix, count] : counts) {
    if (shown++ == 8) {
      s += ", ...";
      break;
    }
    s += (s.empty() ? "" : ", ") + prefix + " (" + std::to_string(count) + ")";
  }
  return s.empty() ? "no tensors" : s;
}

[[noreturn]] void unknownArchitecture(const std::string& path, const std::vector<std::string>& keys,
                                      const std::string& detail) {
  throw Error("unknown architecture: '" + path + "' is not a Stable Diffusion 1.x or 2.x single-file checkpoint" +
              (detail.empty() ? "" : " (" + detail + ")") + "; expected tensors under '" + kUNetPrefix +
              "' (UNet), '" + kVaePrefix + "' (VAE) and '" + kClipPrefix + "' (SD 1.x, CLIP) or '" +
              kOpenClipPrefix + "' (SD 2.x, OpenCLIP); the file has: " + topLevelSummary(keys));
}

LdmFamily detectFamily(const std::string& path, const std::vector<std::string>& keys) {
  if (anyKeyStartsWith(keys, "conditioner.embedders.")) {
    // The refiner conditions on OpenCLIP bigG alone (conditioner.embedders.0.model) and an aesthetic score.
    const bool refiner = anyKeyStartsWith(keys, kRefinerOpenClipPrefix);
    if (refiner && anyKeyStartsWith(keys, "conditioner.embedders.1."))
      unknownArchitecture(path, keys, std::string("an SDXL refiner-style text encoder ('") + kRefinerOpenClipPrefix +
                                          "') beside a second embedder");
    if (!refiner && (!anyKeyStartsWith(keys, kXlClipPrefix) || !anyKeyStartsWith(keys, kXlOpenClipPrefix)))
      unknownArchitecture(path, keys, std::string("an SDXL-style checkpoint without both text encoders ('") +
                                          kXlClipPrefix + "' and '" + kXlOpenClipPrefix + "')");
    if (!anyKeyStartsWith(keys, kUNetPrefix)) unknownArchitecture(path, keys, "no UNet");
    if (!anyKeyStartsWith(keys, kVaePrefix)) unknownArchitecture(path, keys, "no VAE");
    return refiner ? LdmFamily::SDXLRefiner : LdmFamily::SDXL;
  }
  if (anyKeyStartsWith(keys, "control_model."))
    unknownArchitecture(path, keys, "a ControlNet, which sdgen does not implement");
  if (anyKeyStartsWith(keys, "down_blocks.") || anyKeyStartsWith(keys, "text_model.") ||
      anyKeyStartsWith(keys, "encoder.down_blocks."))
    unknownArchitecture(path, keys,
                        "it looks like one component of a diffusers folder; open the folder (with model_index.json)");
  const bool sd1 = anyKeyStartsWith(keys, kClipPrefix);
  const bool sd2 = anyKeyStartsWith(keys, kOpenClipPrefix);
  if (sd1 && sd2) unknownArchitecture(path, keys, "it holds both a CLIP and an OpenCLIP text encoder");
  if (!sd1 && !sd2) unknownArchitecture(path, keys, "no CLIP or OpenCLIP text encoder");
  if (!anyKeyStartsWith(keys, kUNetPrefix)) unknownArchitecture(path, keys, "no UNet");
  if (!anyKeyStartsWith(keys, kVaePrefix)) unknownArchitecture(path, keys, "no VAE");
  return sd2 ? LdmFamily::SD2 : LdmFamily::SD1;
}

}  // namespace

const char* ldmFamilyName(LdmFamily family) {
  return family == LdmFamily::SDXLRefiner ? "SDXL refiner"
         : family == LdmFamily::SDXL      ? "SDXL"
         : family == LdmFamily::SD2       ? "SD 2.x"
                                          : "SD 1.x";
}

int defaultLdmImageSize(LdmFamily family) {
  return family == LdmFamily::SDXL || family == LdmFamily::SDXLRefiner ? 1024 : family == LdmFamily::SD2 ? 768 : 512;
}

LdmCheckpoint openLdmCheckpoint(const std::string& path, std::optional<int> imageSize) {
  auto file = std::make_shared<const SafetensorsFile>(SafetensorsFile::open(path));
  const std::vector<std::string> keys = file->names();
  LdmCheckpoint ckpt;
  ckpt.family = detectFamily(path, keys);
  const int size = imageSize.value_or(defaultLdmImageSize(ckpt.family));

  LdmComponentKeys vae(file, kVaePrefix, "VAE");
  ckpt.vaeConfig = mapLdmVae(vae, size);
  const int scale = 1 << (ckpt.vaeConfig.blockOutChannels.size() - 1);
  if (size <= 0 || size % scale != 0)
    throw Error("image size " + std::to_string(size) + " for '" + path + "' is not a positive multiple of the VAE's " +
                "scale factor " + std::to_string(scale));

  const bool refiner = ckpt.family == LdmFamily::SDXLRefiner, sdxl = ckpt.family == LdmFamily::SDXL || refiner;
  LdmComponentKeys unet(file, kUNetPrefix, "UNet");
  // SDXL's UNet has 64-channel heads, as SD 2.x's (num_head_channels 64).
  ckpt.unetConfig = mapLdmUNet(unet, ckpt.family != LdmFamily::SD1, size / scale, sdxl);

  if (sdxl) {
    ckpt.vaeConfig.scalingFactor = 0.13025f;  // SDXL's VAE (sd_xl_base.yaml scale_factor)
    if (!refiner) {
      LdmComponentKeys text(file, kXlClipPrefix, "text encoder");
      ckpt.textEncoderConfig = mapLdmClipText(text);
      ckpt.textEncoderWeights = std::make_unique<MappedWeights>(text.description(), text.take());
    }
    LdmComponentKeys text2(file, refiner ? kRefinerOpenClipPrefix : kXlOpenClipPrefix, "text encoder 2");
    ckpt.textEncoder2Config = mapLdmOpenClipText(text2, true);
    ckpt.textEncoder2Weights = std::make_unique<MappedWeights>(text2.description(), text2.take());
    // add_embedding reads the pooled projection and six sinusoids of addition_time_embed_dim each (the refiner:
    // five, original size, crop and the aesthetic score).
    UNetConfig& u = ckpt.unetConfig;
    const int ids = refiner ? 5 : 6;
    const int rest = u.projectionClassEmbeddingsInputDim - ckpt.textEncoder2Config.projectionDim;
    if (rest <= 0 || rest % ids)
      throw Error("single-file checkpoint '" + path + "': the UNet's added conditioning reads " +
                  std::to_string(u.projectionClassEmbeddingsInputDim) + " values, which is not the text projection's " +
                  std::to_string(ckpt.textEncoder2Config.projectionDim) + " plus " + std::to_string(ids) +
                  " time-id sinusoids");
    u.additionTimeEmbedDim = rest / ids;
    if (ckpt.textEncoder2Config.numAttentionHeads == 0)
      ckpt.undetermined.push_back("the second text encoder's num_attention_heads (width " +
                                  std::to_string(ckpt.textEncoder2Config.hiddenSize) +
                                  ", not a multiple of CLIP's 64-channel heads)");
  } else if (ckpt.family == LdmFamily::SD2) {
    LdmComponentKeys text(file, kOpenClipPrefix, "text encoder");
    ckpt.textEncoderConfig = mapLdmOpenClipText(text);
    ckpt.textEncoderWeights = std::make_unique<MappedWeights>(text.description(), text.take());
  } else {
    LdmComponentKeys text(file, kClipPrefix, "text encoder");
    ckpt.textEncoderConfig = mapLdmClipText(text);
    ckpt.textEncoderWeights = std::make_unique<MappedWeights>(text.description(), text.take());
  }
  ckpt.unetWeights = std::make_unique<MappedWeights>(unet.description(), unet.take());
  ckpt.vaeWeights = std::make_unique<MappedWeights>(vae.description(), vae.take());

  const UNetConfig& u = ckpt.unetConfig;
  for (size_t i = 0; i < u.attentionHeads.size(); ++i)
    if (u.attentionHeads[i] == 0)
      ckpt.undetermined.push_back("the UNet's attention heads of block " + std::to_string(i) + " (" +
                                  std::to_string(u.blockOutChannels[i]) +
                                  " channels, not a multiple of 64-channel heads)");
  if (!refiner && ckpt.textEncoderConfig.numAttentionHeads == 0)
    ckpt.undetermined.push_back("the text encoder's num_attention_heads (width " +
                                std::to_string(ckpt.textEncoderConfig.hiddenSize) +
                                ", not a multiple of CLIP's 64-channel heads)");
  return ckpt;
}

}  // namespace sdgen::models
