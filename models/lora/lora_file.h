#pragma once
// A LoRA file read into host memory, once: the low-rank factors of every adapted module, as fp32, with their
// alpha. Two layouts are recognized (docs/lora.md):
//   kohya / webui   lora_unet_<module with '_'>.lora_down.weight / .lora_up.weight / .alpha,
//                   lora_te_<module>... (the text encoder); conv LoRA ("LoCon") on 3x3 convs has
//                   down [r, Cin, 3, 3] and up [Cout, r, 1, 1];
//   diffusers/PEFT  unet.<module>.lora_A.weight / .lora_B.weight, text_encoder.<module>...; alpha = rank unless
//                   the file's "lora_adapter_metadata" gives lora_alpha (as diffusers reads it).
// Module names stay as the file spells them here; lora_targets.h matches them to the model's weights. Every
// error is an sdgen::Error naming the file and the tensor: an unknown tensor name, a down without its up, a
// rank that differs between the two, an alpha that is not a scalar or is present for some modules and missing
// for others, LyCORIS variants sdgen does not merge (LoHa, LoKr, DoRA, ...), SDXL's second text encoder.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sdgen::lora {

enum class Component : uint8_t { Unet, TextEncoder };
const char* componentName(Component c);  // "UNet", "text encoder"

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
