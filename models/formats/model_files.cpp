#include "models/formats/model_files.h"

#include <filesystem>

#include "engine/error.h"
#include "models/config/config_files.h"
#include "models/formats/ldm_checkpoint.h"
#include "models/formats/safetensors_weights.h"
#include "models/formats/single_file_config.h"
#include "models/formats/tokenizer_folder.h"
#include "models/resources.h"
#include "models/unsafe_checkpoint.h"

namespace sdgen::models {

namespace fs = std::filesystem;

namespace {

std::string displayName(const std::string& path, bool isFolder) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "dir/" -> "dir"
  return isFolder ? p.filename().string() : p.stem().string();
}

void checkPredictionType(const std::string& value) {
  if (value != "epsilon" && value != "v_prediction")
    throw Error("prediction type override '" + value + "' is neither \"epsilon\" nor \"v_prediction\"");
}

// The tokenizer's ids index the text encoder's embedding table, which the GPU reads without bounds checks.
void attachTokenizer(ModelFiles& m, ClipTokenizerFolder tok, const std::string& tokenizerDir) {
  if (tok.maxTokenId >= m.textEncoderConfig.vocabSize)
    throw Error("the tokenizer '" + tokenizerDir + "' produces ids up to " + std::to_string(tok.maxTokenId) +
                ", but the text encoder ('" + m.textEncoderConfig.source + "') has a vocabulary of " +
                std::to_string(m.textEncoderConfig.vocabSize) + " tokens");
  m.textEncoderConfig.padTokenId = tok.padId;
  m.tokenizer = std::move(tok.tokenizer);
}

// SDXL's second tokenizer, checked against the second text encoder as attachTokenizer does the first.
void attachTokenizer2(ModelFiles& m, ClipTokenizerFolder tok, const std::string& tokenizerDir) {
  if (tok.maxTokenId >= m.textEncoder2Config.vocabSize)
    throw Error("the tokenizer '" + tokenizerDir + "' produces ids up to " + std::to_string(tok.maxTokenId) +
                ", but the text encoder ('" + m.textEncoder2Config.source + "') has a vocabulary of " +
                std::to_string(m.textEncoder2Config.vocabSize) + " tokens");
  m.textEncoder2Config.padTokenId = tok.padId;
  m.tokenizer2 = std::move(tok.tokenizer);
}

// Single files carry no scheduler config: diffusers' from_single_file loads the one of the hub folder it takes the
// configs from (SD 1.x: stable-diffusion-v1-5, SD 2.x: stable-diffusion-2-1), and those files are these, read with
// the same rule as a folder's. The prediction type is not in the weights: SD 2.x at 768 pixels (2-v, 2.1)
// predicts v, the 512-pixel SD 2.x "base" models and SD 1.x predict noise, the pairing diffusers' converter
// assumes (768/v unless the checkpoint is the 512/epsilon base model).
constexpr const char* kSd15SchedulerFile =
    R"({"_class_name": "PNDMScheduler", "_diffusers_version": "0.6.0", "beta_end": 0.012,
        "beta_schedule": "scaled_linear", "beta_start": 0.00085, "num_train_timesteps": 1000,
        "set_alpha_to_one": false, "skip_prk_steps": true, "steps_offset": 1, "trained_betas": null,
        "clip_sample": false})";
constexpr const char* kSd21SchedulerFile =
    R"({"_class_name": "DDIMScheduler", "_diffusers_version": "0.8.0", "beta_end": 0.012,
        "beta_schedule": "scaled_linear", "beta_start": 0.00085, "clip_sample": false, "num_train_timesteps": 1000,
        "prediction_type": "v_prediction", "set_alpha_to_one": false, "skip_prk_steps": true, "steps_offset": 1,
        "trained_betas": null})";

// SDXL single files: stable-diffusion-xl-base-1.0's scheduler_config.json.
constexpr const char* kSdxlSchedulerFile =
    R"({"_class_name": "EulerDiscreteScheduler", "_diffusers_version": "0.19.0.dev0", "beta_end": 0.012,
        "beta_schedule": "scaled_linear", "beta_start": 0.00085, "clip_sample": false, "interpolation_type": "linear",
        "num_train_timesteps": 1000, "prediction_type": "epsilon", "sample_max_value": 1.0, "set_alpha_to_one": false,
        "skip_prk_steps": true, "steps_offset": 1, "timestep_spacing": "leading", "trained_betas": null,
        "use_karras_sigmas": false})";

SchedulerFile singleFileScheduler(LdmFamily family, int imageSize, const std::string& path) {
  if (family == LdmFamily::SDXL || family == LdmFamily::SDXLRefiner)  // the refiner's file is the same
    return parseSchedulerFile(kSdxlSchedulerFile, "defaults for SDXL single files ('" + path + "')");
  const bool sd2 = family == LdmFamily::SD2;
  SchedulerFile s = parseSchedulerFile(sd2 ? kSd21SchedulerFile : kSd15SchedulerFile,
                                       std::string("defaults for ") + ldmFamilyName(family) + " single files ('" +
                                           path + "')");
  if (sd2 && imageSize < 768) s.fields["prediction_type"] = "\"epsilon\"";
  return s;
}

ModelFiles openSingleFile(const std::string& path, const OpenOptions& options) {
  refuseUnsafeCheckpoint(path);
  LdmCheckpoint ckpt = openLdmCheckpoint(path, options.imageSize);
  std::optional<FolderConfigs> folder;
  if (!options.configPath.empty()) {
    folder = loadFolderConfigs(options.configPath);
    applyFolderConfigs(ckpt, *folder);
    if (options.imageSize) {  // an explicit size wins over the folder's
      const int scale = 1 << (ckpt.vaeConfig.blockOutChannels.size() - 1);
      ckpt.unetConfig.sampleSize = *options.imageSize / scale;
      ckpt.vaeConfig.sampleSize = *options.imageSize;
    }
  }
  if (!ckpt.undetermined.empty()) {
    std::string list;
    for (const std::string& u : ckpt.undetermined) list += (list.empty() ? "" : "; ") + u;
    throw Error("single-file checkpoint '" + path + "': the weights do not determine " + list +
                ". Give the diffusers folder the checkpoint was made from as its config folder (OpenOptions::configPath)");
  }
  ModelFiles m;
  m.path = path;
  m.name = displayName(path, false);
  m.kind = ModelSourceKind::SingleFile;
  m.architecture = ldmFamilyName(ckpt.family);
  m.textEncoderConfig = std::move(ckpt.textEncoderConfig);
  m.unetConfig = std::move(ckpt.unetConfig);
  m.vaeConfig = std::move(ckpt.vaeConfig);
  m.scheduler = folder ? folder->scheduler : singleFileScheduler(ckpt.family, m.vaeConfig.sampleSize, path);
  m.textEncoderWeights = std::move(ckpt.textEncoderWeights);
  m.unetWeights = std::move(ckpt.unetWeights);
  m.vaeWeights = std::move(ckpt.vaeWeights);
  const bool refiner = ckpt.family == LdmFamily::SDXLRefiner, sdxl = ckpt.family == LdmFamily::SDXL || refiner;
  if (sdxl) {
    m.textEncoder2Config = std::move(ckpt.textEncoder2Config);
    m.textEncoder2Weights = std::move(ckpt.textEncoder2Weights);
    // stable-diffusion-xl-base-1.0's model_index.json says true, stable-diffusion-xl-refiner-1.0's false
    m.forceZerosForEmptyPrompt = !refiner;
    m.requiresAestheticsScore = refiner;
    validateClipTextConfig(m.textEncoder2Config);
  }
  validateUNetConfig(m.unetConfig);
  validateVaeConfig(m.vaeConfig);
  if (refiner) {
    validateRefinerConfigs(m.textEncoder2Config, m.unetConfig, m.vaeConfig);
  } else {
    validateClipTextConfig(m.textEncoderConfig);
    validateModelConfigs(m.textEncoderConfig, m.unetConfig, m.vaeConfig, sdxl ? &m.textEncoder2Config : nullptr);
  }

  std::string tokenizerDir = options.tokenizerPath;
  if (tokenizerDir.empty() && folder && fs::is_directory(fs::path(options.configPath) / "tokenizer"))
    tokenizerDir = (fs::path(options.configPath) / "tokenizer").string();
  if (tokenizerDir.empty()) tokenizerDir = resourcePath("models/vocab/clip");
  // OpenCLIP pads with 0; a tokenizer folder that names its pad token decides for itself.
  std::optional<int32_t> pad = ckpt.family == LdmFamily::SD2 ? std::optional<int32_t>(0) : std::nullopt;
  if (!refiner)  // the refiner has no first text encoder, hence no first tokenizer
    attachTokenizer(m, loadClipTokenizerFolder(tokenizerDir, pad, m.textEncoderConfig.maxPositionEmbeddings),
                    tokenizerDir);
  if (sdxl) {  // tokenizer_2: the config folder's, else the shipped vocabulary padded with 0 as OpenCLIP does
    std::string dir2 = resourcePath("models/vocab/clip");
    if (folder && fs::is_directory(fs::path(options.configPath) / "tokenizer_2"))
      dir2 = (fs::path(options.configPath) / "tokenizer_2").string();
    attachTokenizer2(m, loadClipTokenizerFolder(dir2, 0, m.textEncoder2Config.maxPositionEmbeddings), dir2);
  }
  return m;
}

// diffusers folders: the VAE of older SD releases names its mid-block attention query/key/value/proj_attn, which
// diffusers renames on load (_convert_deprecated_attention_blocks); so does this.
SafetensorsWeightsOptions vaeRenames(const std::string& weightsPath) {
  SafetensorsWeightsOptions options;
  SafetensorsWeights stored(weightsPath);
  for (const std::string& name : stored.names()) {
    for (auto [old, now] : {std::pair<const char*, const char*>{".query.", ".to_q."},
                            {".key.", ".to_k."},
                            {".value.", ".to_v."},
                            {".proj_attn.", ".to_out.0."}}) {
      size_t at = name.find(old);
      if (at != std::string::npos && name.find("mid_block.attentions.") != std::string::npos)
        options.rename[name] = name.substr(0, at) + now + name.substr(at + std::string(old).size());
    }
  }
  return options;
}

// transformers 4 saved CLIPTextModel's weights as "text_model.embeddings...", "text_model.encoder.layers.N...",
// "text_model.final_layer_norm..."; transformers 5 has no text_model level in CLIPTextModel and saves a model it did
// not load from a file under those in-memory names ("embeddings...", "encoder.layers.N...", "final_layer_norm...":
// it drops its PrefixChange("text_model") conversion for models made from scratch). Both are read as "text_model.*".
// CLIPTextModelWithProjection's text_projection.weight (SD 2.x exporters, SDXL's second encoder) is kept and unused.
SafetensorsWeightsOptions textEncoderRenames(const std::string& weightsPath) {
  const std::string token = "embeddings.token_embedding.weight";
  SafetensorsWeights stored(weightsPath);
  SafetensorsWeightsOptions options;
  if (stored.contains("text_model." + token)) return options;
  if (!stored.contains(token))
    throw Error("text encoder weights '" + weightsPath + "' have no tensor 'text_model." + token +
                "' (transformers 4 names) or '" + token +
                "' (transformers 5 names): not a transformers CLIPTextModel / CLIPTextModelWithProjection");
  for (const std::string& name : stored.names())
    if (!name.starts_with("text_model.") && !name.starts_with("text_projection."))
      options.rename[name] = "text_model." + name;
  return options;
}

// The SDXL refiner's folder: text_encoder_2 and tokenizer_2 only (model_index.json's text_encoder and tokenizer
// are [null, null]), a UNet of five time ids.
ModelFiles openRefinerFolder(const fs::path& dir, const ModelIndex& index, ModelFiles m, const OpenOptions& options) {
  m.requiresAestheticsScore = true;
  m.forceZerosForEmptyPrompt = index.forceZerosForEmptyPrompt;
  m.textEncoder2Config = loadClipTextConfig((dir / "text_encoder_2" / "config.json").string());
  m.unetConfig = loadUNetConfig((dir / "unet" / "config.json").string());
  m.vaeConfig = loadVaeConfig((dir / "vae" / "config.json").string());
  m.scheduler = loadSchedulerFile((dir / "scheduler" / "scheduler_config.json").string());
  validateRefinerConfigs(m.textEncoder2Config, m.unetConfig, m.vaeConfig);
  m.unetWeights = std::make_unique<SafetensorsWeights>(
      findComponentWeights((dir / "unet").string(), "diffusion_pytorch_model", options.variant));
  const std::string vae = findComponentWeights((dir / "vae").string(), "diffusion_pytorch_model", options.variant);
  m.vaeWeights = std::make_unique<SafetensorsWeights>(vae, vaeRenames(vae));
  m.textEncoder2Weights =
      openTextEncoderWeights(findComponentWeights((dir / "text_encoder_2").string(), "model", options.variant));
  const std::string tokenizer2Dir = (dir / "tokenizer_2").string();
  attachTokenizer2(m, loadClipTokenizerFolder(tokenizer2Dir, std::nullopt, m.textEncoder2Config.maxPositionEmbeddings),
                   tokenizer2Dir);
  return m;
}

ModelFiles openDiffusersFolder(const std::string& path, const OpenOptions& options) {
  const fs::path dir(path);
  const fs::path indexPath = dir / "model_index.json";
  if (!fs::exists(indexPath))
    throw Error("unknown architecture: the folder '" + path +
                "' has no model_index.json; expected a diffusers Stable Diffusion folder (model_index.json, "
                "text_encoder/, tokenizer/, unet/, vae/, scheduler/) or a single-file .safetensors checkpoint");
  ModelIndex index = loadModelIndex(indexPath.string());
  ModelFiles m;
  m.path = path;
  m.name = displayName(path, true);
  m.kind = ModelSourceKind::DiffusersFolder;
  m.architecture = "diffusers " + index.className;
  if (index.requiresAestheticsScore) return openRefinerFolder(dir, index, std::move(m), options);
  m.textEncoderConfig = loadClipTextConfig((dir / "text_encoder" / "config.json").string());
  m.unetConfig = loadUNetConfig((dir / "unet" / "config.json").string());
  m.vaeConfig = loadVaeConfig((dir / "vae" / "config.json").string());
  m.scheduler = loadSchedulerFile((dir / "scheduler" / "scheduler_config.json").string());
  if (index.sdxl) {
    m.textEncoder2Config = loadClipTextConfig((dir / "text_encoder_2" / "config.json").string());
    m.forceZerosForEmptyPrompt = index.forceZerosForEmptyPrompt;
  }
  validateModelConfigs(m.textEncoderConfig, m.unetConfig, m.vaeConfig, index.sdxl ? &m.textEncoder2Config : nullptr);

  m.textEncoderWeights =
      openTextEncoderWeights(findComponentWeights((dir / "text_encoder").string(), "model", options.variant));
  m.unetWeights = std::make_unique<SafetensorsWeights>(
      findComponentWeights((dir / "unet").string(), "diffusion_pytorch_model", options.variant));
  const std::string vae = findComponentWeights((dir / "vae").string(), "diffusion_pytorch_model", options.variant);
  m.vaeWeights = std::make_unique<SafetensorsWeights>(vae, vaeRenames(vae));

  const std::string tokenizerDir = (dir / "tokenizer").string();
  attachTokenizer(m, loadClipTokenizerFolder(tokenizerDir, std::nullopt, m.textEncoderConfig.maxPositionEmbeddings),
                  tokenizerDir);
  if (index.sdxl) {
    m.textEncoder2Weights =
        openTextEncoderWeights(findComponentWeights((dir / "text_encoder_2").string(), "model", options.variant));
    const std::string tokenizer2Dir = (dir / "tokenizer_2").string();
    attachTokenizer2(m,
                     loadClipTokenizerFolder(tokenizer2Dir, std::nullopt, m.textEncoder2Config.maxPositionEmbeddings),
                     tokenizer2Dir);
  }
  return m;
}

}  // namespace

const char* modelSourceKindName(ModelSourceKind kind) {
  return kind == ModelSourceKind::SingleFile ? "single-file checkpoint" : "diffusers folder";
}

std::string findComponentWeights(const std::string& componentDir, const std::string& base, const std::string& variant) {
  const fs::path dir(componentDir);
  if (!fs::is_directory(dir)) throw Error("component folder '" + componentDir + "' does not exist");
  auto single = [&](const std::string& v) { return base + (v.empty() ? "" : "." + v) + ".safetensors"; };
  auto index = [&](const std::string& v) { return base + ".safetensors.index." + (v.empty() ? "" : v + ".") + "json"; };
  std::vector<std::string> candidates;
  if (!variant.empty()) {
    candidates = {single(variant), index(variant)};
  } else {
    candidates = {single(""), index(""), single("fp16"), index("fp16")};
  }
  for (const std::string& name : candidates)
    if (fs::is_regular_file(dir / name)) return (dir / name).string();

  // Only pickles: refuse them with the conversion advice rather than "not found".
  const std::string pickleBase = base == "model" ? "pytorch_model" : base;
  for (const std::string& v : {variant, std::string("fp16")}) {
    const fs::path pickle = dir / (pickleBase + (v.empty() ? "" : "." + v) + ".bin");
    if (fs::exists(pickle)) throw Error(unsafeCheckpointMessage(pickle.string()));
  }
  std::string list;
  for (const std::string& name : candidates) list += (list.empty() ? "" : ", ") + name;
  throw Error("no weights in '" + componentDir + "': expected one of " + list);
}

std::unique_ptr<WeightSource> openTextEncoderWeights(const std::string& path) {
  return std::make_unique<SafetensorsWeights>(path, textEncoderRenames(path));
}

ModelFiles openModel(const std::string& path, const OpenOptions& options) {
  if (options.predictionType) checkPredictionType(*options.predictionType);
  if (!fs::exists(path)) throw Error("model path '" + path + "' does not exist");
  ModelFiles m = fs::is_directory(path) ? openDiffusersFolder(path, options) : openSingleFile(path, options);
  // As a field the file sets: every sampler keeps it.
  if (options.predictionType) m.scheduler.fields["prediction_type"] = "\"" + *options.predictionType + "\"";
  return m;
}

}  // namespace sdgen::models
