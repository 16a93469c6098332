// The text of sdgen --help (kept apart from the parser in cli_options.cpp, which it describes).
#include <charconv>
#include <string>

#include "app/cli_options.h"
#include "models/sampling/sampler_kind.h"

namespace sdgen::app {

namespace {

std::string formatFloat(float v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

}  // namespace

std::string usageText() {
  using L = CliLimits;
  std::string s;
  s += "usage: sdgen -p PROMPT [options]       generate images\n";
  s += "       sdgen --show-params FILE.png    print the generation parameters stored in a PNG\n";
  s += "       sdgen --list-devices | --demo [--device N] | --version | --help\n";
  s += "       sdgen --profile-conv [-m M] [-W W -H H] [--precision P] [--json FILE]\n";
  s += "       sdgen --bench-conv2d [--precision P] [--algo A] [--shape N,Cin,Cout,H,W,K,S] [--quick]\n";
  s += "                            [--reps N] [--warmup N] [--reference cudnn] [--json FILE]\n";
  s += "       sdgen serve [--host H] [--port N] [-m M] [--devices 0,1] ...   HTTP API server (sdgen serve --help)\n";
  s += "\n";
  s += "generation:\n";
  s += "  -p, --prompt TEXT           what the image shows\n";
  s += "  -n, --negative-prompt TEXT  what it should not show\n";
  s += "      --prompt-syntax S       webui (default): (word) x1.1, (word:1.3), [word] /1.1, \\( \\) escapes, BREAK,\n";
  s += "                              any length in chunks of 75 tokens; plain: the text as written, cut off after\n";
  s += "                              77 tokens (docs/prompts.md)\n";
  s += "  -m, --model PATH            a diffusers folder or a .safetensors checkpoint (default: the built-in\n";
  s += "                              model models/builtin/sdgen-tiny)\n";
  s += "      --tokenizer DIR         tokenizer folder for single-file checkpoints (default: the shipped CLIP one)\n";
  s += "      --steps N               denoising steps, " + std::to_string(L::kMinSteps) + ".." +
       std::to_string(L::kMaxSteps) + " (default 20)\n";
  s += "      --cfg-scale F           classifier-free guidance scale, " + formatFloat(L::kMinCfgScale) + ".." +
       formatFloat(L::kMaxCfgScale) + " (default 7.5)\n";
  s += "  -s, --seed N                0..2^64-1; omitted or -1: random, and printed\n";
  s += "  -W, --width N               multiple of 8 (default: the model's)\n";
  s += "  -H, --height N              multiple of 8 (default: the model's)\n";
  s += "      --sampler NAME          " + std::string(sampling::samplerFlagNames()) + " (default euler_a)\n";
  s += "      --karras                Karras noise schedule (sigmas); the same as --schedule karras\n";
  s += "      --schedule NAME         automatic, karras, exponential (euler, heun, dpm2, dpm2_a, lms,\n"
       "                              dpmpp_sde) or sgm_uniform (trailing timesteps)\n";
  s += "      --clip-skip N           1 = last CLIP layer (default), 2 = penultimate, ...\n";
  s += "      --original-size W,H     SDXL micro-conditioning: the size the image is said to come from\n";
  s += "      --crop X,Y              SDXL: its crop's top-left corner (default 0,0)\n";
  s += "      --target-size W,H       SDXL: the target size (default for both sizes: the output size)\n";
  s += "      --negative-original-size W,H, --negative-crop X,Y, --negative-target-size W,H\n"
       "                              SDXL: the unconditional half's (both sizes needed; default: the above)\n";
  s += "      --refiner PATH          an SDXL refiner that runs the last steps of an SDXL base model (docs/sdxl.md)\n";
  s += "      --refiner-start F       0..1 exclusive, the share of the steps the base runs first (default 0.8)\n";
  s += "      --refiner-lora FILE[:SCALE] a LoRA for the refiner (its UNet and text encoder), repeatable; --lora and\n";
  s += "                              the prompt's <lora:...> tags are the base model's (docs/lora.md)\n";
  s += "      --aesthetic-score F     the SDXL refiner's aesthetic-score conditioning, 0..10 (default 6; the\n";
  s += "                              unconditional half: --negative-aesthetic-score F, default 2.5)\n";
  s += "  -i, --init-img FILE         image to image: start from this PNG/JPEG (8-bit RGB or grey, no alpha); the\n";
  s += "                              output has its size (-W/-H, if given, must match; docs/img2img.md)\n";
  s += "      --strength F            0..1, how much of the schedule runs from the init image (default 0.75)\n";
  s += "      --mask FILE             inpainting: white (luma >= 128) = repaint, black = keep; the init image's size\n";
  s += "      --lora FILE[:SCALE]     merge a LoRA (kohya or PEFT .safetensors) at SCALE (default 1); repeatable\n";
  s += "      --lora-dir DIR          where the prompt's <lora:NAME:SCALE> tags find NAME.safetensors (docs/lora.md)\n";
  s += "      --vae-tiling            decode (and encode) in overlapping tiles, as diffusers' enable_tiling()\n";
  s += "      --no-vae-tiling         never tile (default: tile when the full-size decode would not fit;\n";
  s += "                              docs/vae-tiling.md)\n";
  s += "      --taesd PATH            TAESD weights: a diffusers AutoencoderTiny folder or file, or madebyollin's\n";
  s += "                              taesd_decoder.safetensors (+ taesd_encoder beside it; docs/taesd.md)\n";
  s += "      --vae full|taesd        the final decode (and image-to-image encode): the model's VAE (default) or TAESD\n";
  s += "      --preview approx|taesd  write a preview PNG (FILE.stepNNN.png) every --preview-every N steps (default\n";
  s += "                              1): the latent-to-RGB projection at latent size, or TAESD's decode\n";
  s += "      --batch-count N         images one after another; seeds seed, seed+1, ... (default 1)\n";
  s += "      --precision P           auto, fp32, fp16 (default auto: fp16 on GPUs that support it)\n";
  s += "  -o, --output FILE.png       default sdgen-<seed>.png; with --batch-count > 1: FILE-1.png, FILE-2.png, ...\n";
  s += "      --no-autotune           convolutions by the fixed rule, no timing (default on GPUs: each conv problem\n";
  s += "                              timed once, cached in SDGEN_CACHE_DIR/conv-tune-v1.json; docs/dispatch-conv.md)\n";
  s += "      --retune                time every conv problem again and rewrite its cache entries\n";
  s += "\n";
  s += "other:\n";
  s += "      --device N              Vulkan device N (default: SDGEN_DEVICE, else the best GPU, else lavapipe)\n";
  s += "      --list-devices          list Vulkan devices and their capabilities\n";
  s += "      --demo                  engine self-check (kernel compile + GPU run checked against the CPU)\n";
  s += "      --show-params FILE.png  print the text chunks (generation parameters) of a PNG\n";
  s += "  -v, --verbose               more output\n";
  s += "\n";
  s += "developer modes (docs/cli.md):\n";
  s += "      --profile-conv          one UNet step (batch 2), one VAE decode and one text encoding with a GPU\n";
  s += "                              timestamp per launch:\n";
  s += "                              every conv layer's algorithm, tile and kernel times; totals by op type\n";
  s += "      --bench-conv2d          the SD1.5 conv layers (or --shape) per precision and algorithm, checked\n";
  s += "                              against the general kernel\n";
  s += "      --algo A                all (default), auto, general (gemm), gemm-v2 (gemm_v2), winograd, coop,\n";
  s += "                              direct, coop-winograd, coop-winograd-rows, tuned (the autotune's fastest\n";
  s += "                              candidate; all has it)\n";
  s += "      --shape N,Cin,Cout,H,W,K,S  one conv problem (padding K/2) instead of the table\n";
  s += "      --quick                 the three quick rows (or --shape), 1 warm-up, 3 timed repetitions\n";
  s += "      --reps N, --warmup N    timed repetitions (default 20) and warm-up runs (default 3, and at\n";
  s += "                              least 300 ms of them unless --quick or --warmup 0)\n";
  s += "      --reference cudnn       also time cuDNN's fastest algorithm (needs the CUDA plugin and device)\n";
  s += "      --json FILE             write the report as JSON too\n";
  s += "      --version               print the version\n";
  s += "  -h, --help                  this help\n";
  s += "\n";
  s += "Values go after a space or '=' (--steps 30, --steps=30). Exit codes: 0 ok, 1 error, 2 usage error.\n";
  return s;
}

}  // namespace sdgen::app
