#pragma once
// A LoRA file read into host memory, once: the low-rank factors of every adapted module, as fp32, with their
// alpha. Two layouts are recognized (docs/lora.md):
//   kohya / webui   lora_unet_<module with '_'>.lora_down.weight / .lora_up.weight / .alpha,
//                   lora_te_<module>... (the text encoder; SDXL: lora_te1_, lora_te2_); conv LoRA ("LoCon") on 3x3 convs has
//                   down [r, Cin, 3, 3] and up [Cout, r, 1, 1];
//   diffusers/PEFT  unet.<module>.lora_A.weight / .lora_B.weight, text_encoder[_2].<module>...; alpha = rank unless
//                   the file's "lora_adapter_metadata" gives lora_alpha (as diffusers reads it).
// Module names stay as the file spells them here; lora_targets.h matches them to the model's weights. Every
// error is an sdgen::Error naming the file and the tensor: an unknown tensor name, a down without its up, a
// rank that differs between the two, an alpha that is not a scalar or is present for some modules and missing
// for others, LyCORIS variants sdgen does not merge (LoHa, LoKr, DoRA, ...). SDXL LoRAs: kohya's lora_te1_ /
// lora_te2_ (the two text encoders) and its UNet modules under LDM names (lora_unet_input_blocks_*, resolved by
// lora_targets.h), PEFT's text_encoder_2.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sdgen::lora {

// TextEncoder2: SDXL's second text encoder (OpenCLIP bigG as CLIPTextModelWithProjection).
enum class Component : uint8_t { Unet, TextEncoder, TextEncoder2 };
inline constexpr int kComponents = 3;
const char* componentName(Component c);  // "UNet", "text encoder", "text encoder 2"

struct LoraModule {
  Component component = Component::Unet;
  // As the file names the module: "lora_unet_down_blocks_0_attentions_0_proj_in" (kohya: '.' spelled '_', so
  // the model's names resolve it) or "down_blocks.0.attentions.0.proj_in" (PEFT, without "unet.").
  std::string key;
  bool kohya = false;
  std::string upName, downName;  // the tensors in the file, for messages
  std::vector<int64_t> upShape, downShape;
  std::shared_ptr<const std::vector<float>> up, down;  // row-major: [out, rank], [rank, in...]
  int64_t rank = 0;
  float alpha = 0;  // the effective weights are W + scale * alpha / rank * up . down
};

struct LoraFile {
  std::string path;
  const char* layout = "";  // "kohya" or "PEFT"
  std::vector<LoraModule> modules;
};

// Reads and validates the whole file (bounded by the safetensors reader's checks).
std::shared_ptr<const LoraFile> readLoraFile(const std::string& path);

}  // namespace sdgen::lora
