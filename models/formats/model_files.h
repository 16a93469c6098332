#pragma once
// One entry point from a path to everything the networks and the pipeline need: the four configs, the weights of
// each component under diffusers names, and the tokenizer. Two layouts are read:
//  - a diffusers folder: model_index.json, text_encoder/, tokenizer/, unet/, vae/, scheduler/ (SDXL: also
//    text_encoder_2/, tokenizer_2/);
//  - a single-file SD 1.x/2.x checkpoint (.safetensors, original LDM keys), whose architecture is inferred from
//    the tensor shapes (formats/ldm_checkpoint.h).
// Pickle checkpoints (.ckpt, .bin, ...) are refused (unsafe_checkpoint.h). Every error is an sdgen::Error naming
// the path, file, field or tensor involved.
#include <memory>
#include <optional>
#include <string>

#include "models/config/model_config.h"
#include "models/tokenizer/tokenizer.h"
#include "models/weight_source.h"

namespace sdgen::models {

enum class ModelSourceKind { DiffusersFolder, SingleFile };
const char* modelSourceKindName(ModelSourceKind kind);  // "diffusers folder" / "single-file checkpoint"

struct OpenOptions {
  // Single files: a tokenizer folder (vocab.json + merges.txt, or tokenizer.json); empty: the CLIP vocabulary
  // sdgen ships (resourcePath("models/vocab/clip")), padded with 0 for SD 2.x as OpenCLIP does.
  std::string tokenizerPath;
  // Diffusers folders: the weight variant to load ("fp16" -> diffusion_pytorch_model.fp16.safetensors). Empty:
  // the plain files, else the fp16 variant when only that is there.
  std::string variant;
  // Overrides the scheduler's prediction_type ("epsilon" | "v_prediction"). Single files need it where the guess
  // is wrong: SD 2.x files are taken as v-prediction models at 768 pixels and above (2-v, 2.1), epsilon below
  // (the 512-pixel "base" models), SD 1.x files as epsilon.
  std::optional<std::string> predictionType;
  // Single files: the resolution the model was trained at (UNet/VAE sample sizes); default 512 (SD 1.x), 768 (SD 2.x)
  // or the config folder's. For SD 2.x it also decides the default prediction type (above).
  std::optional<int> imageSize;
  // Single files: a diffusers folder whose configs describe the checkpoint, as diffusers' from_single_file(config=)
  // (formats/single_file_config.h): they supply what the shapes cannot show (attention heads, sample sizes, the
  // scheduler, and the tokenizer when tokenizerPath is empty) and must agree with what the shapes show. Needed when
  // LDM's conventions cannot give the head counts (widths that are no multiple of 64).
  std::string configPath;
};

struct ModelFiles {
  std::string path;  // as given
  std::string name;  // the folder or file name without extension, for display and image metadata
  ModelSourceKind kind = ModelSourceKind::DiffusersFolder;
  std::string architecture;  // "SD 1.x" / "SD 2.x" for single files; diffusers folders: "diffusers <pipeline class>"

  ClipTextConfig textEncoderConfig;  // padTokenId is the tokenizer's padding id (the SDXL refiner: unset)
  UNetConfig unetConfig;
  VaeConfig vaeConfig;
  SchedulerFile scheduler;  // what scheduler_config.json sets; models::schedulerConfigFor resolves it per sampler

  std::unique_ptr<WeightSource> textEncoderWeights, unetWeights, vaeWeights;  // textEncoderWeights: null for a refiner
  std::unique_ptr<Tokenizer> tokenizer;  // null for a refiner

  // SDXL (docs/sdxl.md): the second text encoder (CLIPTextModelWithProjection: OpenCLIP bigG), its tokenizer,
  // and whether an empty negative prompt conditions on zeros (model_index.json's force_zeros_for_empty_prompt).
  ClipTextConfig textEncoder2Config;
  std::unique_ptr<WeightSource> textEncoder2Weights;
  std::unique_ptr<Tokenizer> tokenizer2;
  bool forceZerosForEmptyPrompt = false;
  // The SDXL refiner (requires_aesthetics_score; single files with conditioner.embedders.0.model only): no first
  // text encoder or tokenizer; the time ids are original size, crop and an aesthetic score.
  bool requiresAestheticsScore = false;
  bool isSdxl() const { return textEncoder2Weights != nullptr; }
  bool isSdxlRefiner() const { return isSdxl() && requiresAestheticsScore; }
};

// A folder with model_index.json is a diffusers folder; a file is a single-file checkpoint. Anything else, a
// folder without model_index.json, or a file that is neither SD 1.x nor SD 2.x is an "unknown architecture"
// error naming the path and what was expected. The configs are validated against each other
// (validateModelConfigs) and the tokenizer against the text encoder (its ids must fit the embedding table).
ModelFiles openModel(const std::string& path, const OpenOptions& options = {});

// The weights of a transformers CLIPTextModel / CLIPTextModelWithProjection (a .safetensors file or shard index)
// under the names networks::ClipTextEncoder reads ("text_model.*"), whether transformers 4 wrote them
// ("text_model.embeddings...") or transformers 5 ("embeddings..."); text_projection.weight is allowed. A file with
// neither layout is an error naming it and the missing 'text_model.embeddings.token_embedding.weight'.
std::unique_ptr<WeightSource> openTextEncoderWeights(const std::string& path);

// The weight file of one diffusers component folder: `<base>.safetensors`, `<base>.safetensors.index.json`, and
// with a variant `<base>.<variant>.safetensors` / `<base>.safetensors.index.<variant>.json` (base:
// "diffusion_pytorch_model" for unet/vae, "model" for text_encoder). Refuses pickles when they are all there is.
std::string findComponentWeights(const std::string& componentDir, const std::string& base, const std::string& variant);

}  // namespace sdgen::models
