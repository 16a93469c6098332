#pragma once
// Text to image, image to image and inpainting: tokenize (in 77-token windows, models/prompt/) -> CLIP text encoder
// (SDXL: both encoders and the added conditioning, sdxl_conditioning.h) (+ webui's emphasis) ->
// denoising loop with classifier-free guidance (conditional and
// unconditional halves batched through one UNet pass, the step recorded once and replayed) -> VAE decode.
// With an init image, the denoising starts from its VAE-encoded latents noised to the step `strength` selects
// (diffusers' StableDiffusionImg2ImgPipeline); with a mask too, as diffusers' StableDiffusionInpaintPipeline:
// a 9-channel inpainting UNet reads the mask and the masked image's latents, an ordinary UNet's latents are
// blended with the re-noised image latents outside the mask after every step (docs/img2img.md).
// Load once, generate many times; each generation reuses the recorded sequences when the size is unchanged.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/context.h"
#include "engine/dtype.h"
#include "engine/error.h"
#include "models/lora/lora_library.h"
#include "models/pipeline/decoder_choice.h"
#include "models/pipeline/image_inputs.h"
#include "models/pipeline/latent_preview.h"
#include "models/pipeline/micro_conditioning.h"
#include "models/pipeline/vae_tile_plan.h"
#include "models/prompt/prompt_syntax.h"
#include "models/sampling/sampler_kind.h"
#include "ops/conv2d_tune_settings.h"

namespace sdgen::ops {
class ConvTuner;
}

namespace sdgen::pipeline {

// A model load's progress (LoadOptions::progress): called as each component starts loading, then once when all
// have (`done`). `elapsedMs` counts from the start of the load.
struct LoadProgress {
  std::string component;  // "text encoder", "UNet", "VAE decoder", "text encoder 2", "TAESD"; empty when done
  int index = 0, count = 0;  // the component's 1-based position and how many the model has
  double elapsedMs = 0;
  bool done = false;
};

struct LoadOptions {
  std::string modelPath;      // a diffusers folder or a single-file checkpoint (.safetensors)
  std::string tokenizerPath;  // single-file checkpoints: a tokenizer folder; empty = the shipped CLIP vocabulary
  DType precision = DType::F32;  // storage of weights and activations (fp32 or fp16)
  // Single-file checkpoints (see models::OpenOptions): a diffusers folder whose configs supply what the tensor
  // shapes cannot show, the training resolution and the prediction type; diffusers folders: the weight variant.
  std::string configPath;
  std::optional<int> imageSize;
  std::optional<std::string> predictionType;
  std::string variant;
  // LoRAs merged into the UNet and text encoder weights at load (docs/lora.md), and the folder webui prompt
  // tags <lora:NAME:SCALE> are looked up in.
  std::vector<lora::LoraSpec> loras;
  std::string loraDir;
  // The convolution autotune (docs/dispatch-conv.md "Autotune"; --no-autotune, --retune).
  ops::ConvTuneSettings autotune;
  // TAESD (docs/taesd.md): a diffusers AutoencoderTiny folder or file, or madebyollin's taesd_decoder.safetensors
  // (taesd_encoder.safetensors beside it for image to image); empty: none. Needed by GenerationRequest's
  // ImageDecoder::Taesd and PreviewDecoder::Taesd.
  std::string taesdPath;
  // Where the untiled VAE decode writes the image: device memory, copied into the host-visible image by the same
  // submission (true), or the host-visible image itself (false). Unset: device memory on discrete GPUs, whose
  // last decode kernel writes host memory slowly (docs/perf.md, session 19). Tests force both.
  std::optional<bool> decodeThroughDeviceMemory;
  // Told of each component as its load starts, and when the load is done (null: nothing is told).
  std::function<void(const LoadProgress&)> progress;
};

struct GenerationRequest {
  std::string prompt, negativePrompt;
  int steps = 20;
  float cfgScale = 7.5f;
  uint64_t seed = 0;
  int width = 0, height = 0;  // 0: the model's default (UNet sample size x VAE scale factor)
  sampling::SamplerKind sampler = sampling::SamplerKind::EulerAncestral;
  bool karras = false;
  // Exponential sigmas (use_exponential_sigmas; euler, heun, dpm2, dpm2_a, lms, dpmpp_sde) and webui's
  // "SGM Uniform" schedule (timestep_spacing "trailing").
  bool exponential = false, sgmUniform = false;
  int clipSkip = 0;  // 0: the text encoder's last layer; 1: the penultimate, ...
  // Webui: emphasis syntax, BREAK, <lora:NAME:SCALE> tags (added to the pipeline's LoRAs for this image, cut
  // out of the text) and prompts of any length in 77-token windows (models/prompt/); Plain: the text as
  // written, truncated to one window.
  prompt::PromptSyntax promptSyntax = prompt::PromptSyntax::Webui;
  // Image to image: the starting image, exactly the output size (width/height 0 take its size). strength in
  // [0, 1]: how much of the schedule runs (1 = all of it, from pure noise for inpainting).
  std::optional<RgbImage> initImage;
  float strength = 0.75f;
  // Inpainting (needs initImage, same size): white (luma >= 128) = repaint, black = keep.
  std::optional<RgbImage> mask;
  // VAE decode (and image-to-image encode) in diffusers' overlapping tiles (docs/vae-tiling.md): On as
  // enable_tiling() (images larger than one tile), Off never, Auto when the full-size decode would not fit.
  VaeTilingMode vaeTiling = VaeTilingMode::Auto;
  // The final decode (and image-to-image encode): the model's VAE, or TAESD (LoadOptions::taesdPath), which never
  // tiles and, as diffusers' AutoencoderTiny, encodes without drawing from the generator (docs/taesd.md).
  ImageDecoder decoder = ImageDecoder::Vae;
  // What GenerationHooks::preview gets: the latent-to-RGB projection (Approx) or TAESD's decode at full size.
  PreviewDecoder preview = PreviewDecoder::Approx;
  // SDXL's size and crop conditioning (ignored by SD 1.x/2.x models); the refiner's aesthetic scores.
  SdxlMicroConditioning micro;
  // The base + refiner ensemble (diffusers' denoising_end / denoising_start, denoising_range.h; samplers of one
  // evaluation per step). denoisingEnd: stop where the refiner takes over and return Image::latents undecoded.
  // denoisingStart: continue `startLatents` (NCHW [1, C, h, w], the base's Image::latents; width and height must
  // be given) from that point, without noising them; strength and initImage do not apply.
  std::optional<double> denoisingEnd, denoisingStart;
  std::vector<float> startLatents;
  // Image::pixels filled (diffusers' output_type="np"); frontends that write only the 8-bit image turn it off:
  // one 3 MB pass less per 512^2 image (docs/perf.md, session 19).
  bool floatPixels = true;
};

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3, row-major, top row first
  std::vector<float> pixels;  // the same as floats in [0, 1] before quantization (diffusers' output_type="np");
                              // empty where GenerationRequest::floatPixels is off
  std::vector<std::string> warnings;  // e.g. a plain-syntax prompt longer than the encoder's 77 tokens, cut off
  bool vaeTiled = false;  // decoded (and encoded) in tiles
  // GenerationRequest::denoisingEnd: the latents where the schedule stopped, NCHW [1, C, h, w]; rgb and pixels
  // are then empty (nothing is decoded).
  std::vector<float> latents;
};

// Wall-clock milliseconds of the stages of the last generate() (and of loading).
struct StageTimings {
  double loadMs = 0, compileMs = 0, encodeMs = 0, decodeMs = 0;
  // encodeMs's parts: prompt parsing and tokenization; the text encoder and the cross-attention K/V of the text
  // submitted (with the emphasis and SDXL's pooled rows, which wait for the encoder); the starting latents drawn
  // (on the host, during the GPU's text work) and uploaded, which waits for that work.
  double tokenizeMs = 0, textSubmitMs = 0, startMs = 0;
  // decodeMs's parts: the decoder run (submit, GPU, wait) with the image read into host memory; the host's
  // post-process (scale, clamp, round to 8 bits, the non-finite check).
  double decodeRunMs = 0, postprocessMs = 0;
  std::vector<double> stepMs;
};

// Device memory by component (sdgen -v): resident weights, what the recorded graphs (text encoders, denoising
// steps, decodes) plan for their intermediates, load time. The plans share one arena (graph/shared_arena.h).
struct ComponentMemory {
  std::string name;
  uint64_t weightBytes = 0;
  uint64_t arenaBytes = 0;   // the component's graphs' planned intermediates, in the shared arena
  uint64_t bufferBytes = 0;  // its own buffers besides weights and arena (the steps' cross-attention K/V)
  double loadMs = 0;
};
struct MemoryReport {
  std::vector<ComponentMemory> components;  // text encoder, UNet, VAE decoder
  uint64_t sharedArenaBytes = 0;            // the one arena every graph's intermediates live in (held)
  uint64_t convScratchBytes = 0;            // the conv scratch the networks share
  uint64_t convScratchNeedBytes = 0;        // its largest request per slot (ops::Conv2dScratch::largestNeedBytes)
  uint64_t peakAllocatedBytes = 0;          // the engine's own counter: peak of device memory blocks held
  uint64_t peakProcessBytes = 0;            // VK_EXT_memory_budget's heap usage, peak sampled; 0 without it
  uint64_t streamedBytes = 0, streamBatches = 0;  // the weight stream (nn::WeightStream)
  uint64_t streamHostTensors = 0;                 // of its tensors, packed by the host into mapped device memory
  double streamReadMs = 0, streamMs = 0;
};

// step: 1..steps, called after each denoising step completes.
using ProgressCallback = std::function<void(int step, int steps)>;

// Thrown by generate() when GenerationHooks::cancelRequested said to stop. The pipeline stays usable.
class Cancelled : public Error {
 public:
  using Error::Error;
};

// Optional hooks of one generate() call.
struct GenerationHooks {
  ProgressCallback progress;
  // Polled before each denoising step and before decoding; true makes generate() throw Cancelled.
  std::function<bool()> cancelRequested;
  // Called after each step with the projected latents (one latent readback per step). The projection starts
  // as defaultLatentRgbProjection and is refitted for the loaded model from every image generated with a
  // preview hook (latents and decoded image, see LatentRgbFit), so previews match the model's colors from
  // its second image on. With GenerationRequest::preview Taesd: TAESD's decode of the latents instead, at the
  // image's size (LatentPreview::pixelScale 1), as diffusers would decode them.
  std::function<void(const LatentPreview&)> preview;
};

class TextToImage {
 public:
  TextToImage(Context& ctx, const LoadOptions& options);
  ~TextToImage();
  TextToImage(const TextToImage&) = delete;
  TextToImage& operator=(const TextToImage&) = delete;

  // Throws sdgen::Error naming the problem (bad size, prompt issues, out of device memory).
  Image generate(const GenerationRequest& request, const ProgressCallback& progress = {});
  // The same with cancellation and live preview; throws Cancelled when hooks.cancelRequested() said so.
  Image generate(const GenerationRequest& request, const GenerationHooks& hooks);

  const StageTimings& timings() const;
  MemoryReport memoryReport() const;
  // The model's convolution autotune: what it tuned, took from its cache and chose per layer (sdgen -v).
  const ops::ConvTuner& convTuner() const;
  std::string modelName() const;   // the folder or file name, for metadata
  int defaultWidth() const;
  int defaultHeight() const;
  // A 9-input-channel UNet (latents, mask, masked-image latents): generating needs an init image and a mask.
  bool isInpaintingModel() const;
  // Why TAESD cannot decode this model's previews (no TAESD loaded, other latent channels or scale, taesdxl), or
  // empty when it can: the GUI then falls back to the latent-to-RGB preview instead of failing.
  std::string taesdPreviewProblem() const;
  bool isSdxlModel() const;  // two text encoders and text_time added conditioning (or the refiner's one)
  bool isSdxlRefiner() const;  // text_encoder_2 alone, aesthetic-score conditioning
  // The latent space, which a refiner must share with the base model it continues: channels, the VAE's scale
  // factor (pixels per latent) and scaling_factor.
  int latentChannels() const;
  int vaeScaleFactor() const;
  float vaeScalingFactor() const;

  // The LoRAs of every later generation (replacing LoadOptions::loras; prompt tags add to them). Checked now
  // (unreadable files, LoRAs for another model: sdgen::Error, the current set stays); merged by the next
  // generate(), which re-packs only the weights the old or new set touches.
  void setLoras(const std::vector<lora::LoraSpec>& loras);
  // The folder later prompt tags are looked up in (LoadOptions::loraDir).
  void setLoraDirectory(const std::string& dir);
  // The LoRAs merged into the weights now (the last generation's, tags included).
  const std::vector<lora::LoraSpec>& mergedLoras() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sdgen::pipeline
