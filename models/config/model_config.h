#pragma once
// The architecture and sampling configuration of a Stable Diffusion model, as plain values. Filled from a
// diffusers folder's config.json files or inferred from a single-file checkpoint's tensor shapes
// (models/config/*.cpp); the model builders (CLIP, UNet, VAE) read nothing else, so no size is hard-coded.
// Field names follow diffusers/transformers; see docs/models.md for the mapping and what is refused.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sdgen::models {

// transformers CLIPTextConfig.
struct ClipTextConfig {
  int vocabSize = 49408;
  int hiddenSize = 768;
  int intermediateSize = 3072;
  int numHiddenLayers = 12;
  int numAttentionHeads = 12;
  int maxPositionEmbeddings = 77;
  std::string hiddenAct = "quick_gelu";  // "quick_gelu" (SD 1.x) or "gelu" (SD 2.x, OpenCLIP)
  float layerNormEps = 1e-5f;
  int padTokenId = 49407;  // what the tokenizer pads with (SD 2.x: 0)
  // CLIPTextModelWithProjection (SDXL's second encoder): text_projection's output width, and the id its pooling
  // looks for (transformers: the legacy eos_token_id 2 pools at the highest id, else at the first eos_token_id).
  int projectionDim = 512;
  int eosTokenId = 49407;
  std::string source;      // the config.json it came from, or the checkpoint it was inferred from (messages)
};

// diffusers UNet2DConditionModel config (the subset Stable Diffusion 1.x/2.x uses).
struct UNetConfig {
  int inChannels = 4, outChannels = 4;
  int sampleSize = 64;                         // latent size the model was trained at
  std::vector<int> blockOutChannels;           // per resolution level
  std::vector<std::string> downBlockTypes;     // "CrossAttnDownBlock2D" | "DownBlock2D"
  std::vector<std::string> upBlockTypes;       // "UpBlock2D" | "CrossAttnUpBlock2D"
  std::string midBlockType = "UNetMidBlock2DCrossAttn";  // or "" (no mid block, mid_block_type null)
  std::vector<int> layersPerBlock;             // per down block (up blocks have one more)
  std::vector<int> attentionHeads;             // per down block: num_attention_heads, or attention_head_dim when
                                               // that is null (diffusers' legacy naming: it counts heads)
  std::vector<int> transformerLayersPerBlock;  // per down block
  int crossAttentionDim = 768;
  bool useLinearProjection = false;            // proj_in/proj_out linear (SD 2.x) instead of 1x1 conv
  bool upcastAttention = false;
  // SDXL's added conditioning (addition_embed_type "text_time"; empty: none): add_embedding reads
  // concat(pooled text embedding, sinusoid(time_ids) of additionTimeEmbedDim each), projectionClassEmbeddingsInputDim
  // wide, and its output is added to the time embedding.
  std::string additionEmbedType;
  int additionTimeEmbedDim = 0;
  int projectionClassEmbeddingsInputDim = 0;
  int normNumGroups = 32;
  float normEps = 1e-5f;
  bool flipSinToCos = true;
  float freqShift = 0.f;
  int downsamplePadding = 1;
  int convInKernel = 3, convOutKernel = 3;
  std::string source;  // the config.json it came from, or the checkpoint it was inferred from (messages)
};

// diffusers AutoencoderKL config.
struct VaeConfig {
  int inChannels = 3, outChannels = 3, latentChannels = 4;
  std::vector<int> blockOutChannels;  // encoder order; the decoder runs them reversed
  int layersPerBlock = 2;             // decoder up blocks have layersPerBlock + 1 resnets
  int normNumGroups = 32;
  int sampleSize = 512;
  float scalingFactor = 0.18215f;
  std::optional<float> shiftFactor;
  // diffusers' AutoencoderKL default true: SDXL pipelines decode (and encode) in fp32 even in fp16, because the
  // original SDXL VAE overflows there; fp16-safe VAEs (sdxl-vae-fp16-fix) say false. SD 1.x/2.x pipelines ignore it.
  bool forceUpcast = true;
  bool useQuantConv = true, usePostQuantConv = true;
  bool midBlockAddAttention = true;
  std::string source;  // the config.json it came from, or the checkpoint it was inferred from (messages)
};

// A scheduler/scheduler_config.json as diffusers keeps it: the fields the file sets, with their values. Which
// value every other field takes depends on the scheduler class a sampler is made with (schedulerConfigFor in
// config_files.h): diffusers' SchedulerClass.from_config(pipe.scheduler.config) keeps what the file sets and
// takes the created class's __init__ default for the rest. docs/models.md, "Scheduler configs".
struct SchedulerFile {
  // Every field the file sets -> its value as JSON text (non-finite numbers spelled -Infinity / Infinity / NaN
  // as Python writes them). Leaves out "_"-prefixed entries and the fields listed in _use_default_values.
  std::map<std::string, std::string> fields;
  std::string className;  // _class_name, e.g. "PNDMScheduler" (for messages: it decides no value)
  std::string source;     // the scheduler_config.json it came from, or "defaults for ..." (messages)
};

// A scheduler config resolved for one diffusers scheduler class: the values a sampler uses.
struct SchedulerConfig {
  int numTrainTimesteps = 1000;
  float betaStart = 0.00085f, betaEnd = 0.012f;
  std::string betaSchedule = "scaled_linear";  // "scaled_linear" | "linear"
  std::string predictionType = "epsilon";      // "epsilon" | "v_prediction"
  int stepsOffset = 1;
  std::string timestepSpacing = "leading";     // "leading" | "trailing" | "linspace"
  bool setAlphaToOne = false;                  // DDIM
  bool clipSample = false;                     // DDIM
  double clipSampleRange = 1.0;                // DDIM: x0 is clamped to [-range, range] when clipSample
  bool useKarrasSigmas = false;                // Euler, DPM++ 2M: the config asks for Karras sigmas
  std::optional<double> sigmaMin, sigmaMax;    // Euler, DPM++ 2M: the Karras range (default: the schedule's)
  bool useExponentialSigmas = false;           // the k-diffusion classes, DPM-Solver, UniPC: exponential sigmas
  int solverOrder = 2;                         // UniPC (1..3)
  std::string solverType = "bh2";              // UniPC: "bh1" | "bh2"
  bool lowerOrderFinal = true;                 // UniPC
  std::vector<int> disableCorrector;           // UniPC: steps whose corrector is skipped
  int originalInferenceSteps = 50;             // LCM: the distillation schedule the timesteps are picked from
  double timestepScaling = 10.0;               // LCM: boundary-condition scaling
  std::string className;                       // the diffusers class it was resolved for
  std::string source;  // the scheduler_config.json it came from, or "defaults for CHECKPOINT" (messages)
};

struct TokenizerPaths {
  std::string directory;  // a diffusers tokenizer/ folder (vocab.json + merges.txt, or tokenizer.json); empty:
                          // the CLIP vocabulary the project ships (models/vocab/clip)
};

}  // namespace sdgen::models
