#pragma once
// The three components of a single-file Stable Diffusion checkpoint in the original LDM/CompVis layout. Each
// function reads the architecture from the tensor shapes, fills `keys` with the table that maps every diffusers
// parameter name to its LDM key (with the splits and reshapes where the layouts differ), and refuses keys that
// are not part of an SD 1.x/2.x component. Internal to models/formats; docs/models.md describes the mapping.
#include "models/config/model_config.h"
#include "models/formats/ldm_component_keys.h"

namespace sdgen::models {

// "first_stage_model.": encoder.down.I.block.J -> encoder.down_blocks.I.resnets.J, decoder.up.(N-1-I) ->
// decoder.up_blocks.I, mid.attn_1.{norm,q,k,v,proj_out} -> mid_block.attentions.0.{group_norm,to_q,to_k,to_v,
// to_out.0} (1x1 conv kernels exposed as linear [C, C]). `imageSize` becomes sample_size.
VaeConfig mapLdmVae(LdmComponentKeys& keys, int imageSize);

// "model.diffusion_model.": input_blocks / middle_block / output_blocks -> down_blocks / mid_block / up_blocks.
// Attention heads cannot be read from shapes: 64-channel heads when `openClipFamily` (SD 2.x,
// num_head_channels = 64), else 8 heads (SD 1.x, num_heads = 8). `sampleSize` is the latent size.
// sdxl: also label_emb.0.{0,2} -> add_embedding.linear_{1,2} (text_time added conditioning; its
// addition_time_embed_dim is left 0 for the caller, who knows the pooled embedding's width).
UNetConfig mapLdmUNet(LdmComponentKeys& keys, bool openClipFamily, int sampleSize, bool sdxl = false);

// SD 1.x, "cond_stage_model.transformer.": already transformers CLIPTextModel names (with "text_model." added
// where a checkpoint from before transformers 4 lacks it).
ClipTextConfig mapLdmClipText(LdmComponentKeys& keys);

// SD 2.x, "cond_stage_model.model." (OpenCLIP): resblocks -> encoder.layers with the fused attention input
// projection split into q/k/v; SD 2.x conditions on the penultimate layer, so the last resblock (and the
// text projection) is left out: the diffusers text encoder has one layer fewer than the checkpoint.
// sdxl (SDXL's OpenCLIP bigG, "conditioner.embedders.1.model."): every resblock is kept (SDXL takes the
// penultimate hidden state itself and pools the last), and text_projection ([width, projection]) is exposed as
// CLIPTextModelWithProjection's text_projection.weight ([projection, width]).
ClipTextConfig mapLdmOpenClipText(LdmComponentKeys& keys, bool sdxl = false);

}  // namespace sdgen::models
