#pragma once
// A single-file Stable Diffusion 1.x/2.x checkpoint (.safetensors) in the original LDM/CompVis layout:
//   model.diffusion_model.*                    UNet
//   first_stage_model.*                        VAE
//   cond_stage_model.transformer.text_model.*  SD 1.x text encoder (transformers CLIP names; older files lack
//                                              the text_model. level)
//   cond_stage_model.model.*                   SD 2.x text encoder (OpenCLIP)
//   conditioner.embedders.0.transformer.*      SDXL's first text encoder (transformers CLIP names)
//   conditioner.embedders.1.model.*            SDXL's second text encoder (OpenCLIP bigG with its projection)
// opened as three WeightSources under diffusers names, with the architecture inferred from the tensor shapes.
// The file is mapped once and shared by the three sources. Other keys (EMA copies, alphas_cumprod, ...) are
// ignored; keys under the component prefixes that no SD 1.x/2.x part explains are refused.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/config/model_config.h"
#include "models/weight_source.h"

namespace sdgen::models {

// SDXLRefiner: conditioner.embedders.0.model (OpenCLIP bigG) alone, five time ids (aesthetic score).
enum class LdmFamily { SD1, SD2, SDXL, SDXLRefiner };
const char* ldmFamilyName(LdmFamily family);  // "SD 1.x" / "SD 2.x" / "SDXL" / "SDXL refiner"
// The resolution diffusers assumes for single files (DIFFUSERS_TO_LDM_DEFAULT_IMAGE_SIZE_MAP): 512 for SD 1.x,
// 768 for SD 2.x (stable-diffusion-2-1; pass 512 for the "base" models), 1024 for SDXL.
int defaultLdmImageSize(LdmFamily family);

// The configs hold what the shapes show (widths, levels, layers, attention levels, transformer depths, cross-
// attention width, linear or 1x1-conv projections, kernels, text encoder width/depth/vocabulary) and, for what
// they cannot show, LDM's conventions for the family: SD 1.x 8 UNet heads, SD 2.x 64-channel UNet heads, 64-channel
// text encoder heads, CLIP's quick_gelu / OpenCLIP's gelu, GroupNorm(32), sample sizes from the image size, SD 2.x
// upcast attention. A head count the conventions cannot give (a width that is no multiple of 64) is left 0 and
// listed in `undetermined`. The configs are not validated here (openModel does, after any config folder).
struct LdmCheckpoint {
  LdmFamily family = LdmFamily::SD1;
  ClipTextConfig textEncoderConfig;
  UNetConfig unetConfig;
  VaeConfig vaeConfig;
  std::unique_ptr<WeightSource> textEncoderWeights, unetWeights, vaeWeights;  // textEncoderWeights: null for the refiner
  ClipTextConfig textEncoder2Config;  // SDXL and the SDXL refiner
  std::unique_ptr<WeightSource> textEncoder2Weights;
  std::vector<std::string> undetermined;  // e.g. "the text encoder's num_attention_heads (width 32 ...)"
};

// Throws "unknown architecture: ..." naming the path and what was expected when the file is not an SD 1.x/2.x
// checkpoint (SDXL, SD3, a lone diffusers component, ...), and errors naming the file and the LDM key when a
// tensor the inferred architecture needs is missing or one under a component prefix fits no SD 1.x/2.x part.
// `imageSize` sets the UNet and VAE sample sizes (default: defaultLdmImageSize).
LdmCheckpoint openLdmCheckpoint(const std::string& path, std::optional<int> imageSize = std::nullopt);

}  // namespace sdgen::models
