#pragma once
// The LDM (SGM) names of a diffusers UNet's modules, for LoRAs that name them so: kohya's sd-scripts trains SDXL
// on the original LDM UNet, so an SDXL kohya LoRA says "lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q"
// for diffusers' "down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_q". The numbering is the one
// models/formats/ldm_unet.cpp reads from single-file checkpoints (and diffusers' _maybe_map_sgm_blocks_to_diffusers
// converts): input_blocks.0 is conv_in, then per down level its resnets ("K.0", the transformer at "K.1") and a
// downsampler ("K.0.op"); middle_block.0/1/2; output_blocks mirror the levels with one resnet more, the upsampler
// last (".1.conv", or ".2.conv" after a transformer). The level structure is read from the weight names.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sdgen::lora {

// (LDM module name, diffusers weight name) for every ".weight" of `diffusersNames` that has an LDM name
// ("down_blocks.1.resnets.0.conv1.weight" -> "input_blocks.4.0.in_layers.2"). Names it does not know (none of a
// diffusers UNet's) are left out.
std::vector<std::pair<std::string, std::string>> ldmUnetModules(const std::vector<std::string>& diffusersNames);

}  // namespace sdgen::lora
