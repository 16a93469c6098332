"""The sdgen-tiny architecture: Stable Diffusion 1.x's components (CLIP text encoder, AutoencoderKL, conditional
UNet, scaled-linear DDPM schedule) at a size that fits 25 MB in fp16 and runs in seconds on a CPU."""
from __future__ import annotations

from diffusers import AutoencoderKL, DDPMScheduler, PNDMScheduler, UNet2DConditionModel
from transformers import CLIPTextConfig, CLIPTextModel

TEXT_WIDTH = 64  # CLIP hidden size = the UNet's cross_attention_dim

# Stable Diffusion 1.x's scheduler configuration, value for value (its scheduler_config.json).
SD_SCHEDULER_CONFIG = dict(
    num_train_timesteps=1000,
    beta_start=0.00085,
    beta_end=0.012,
    beta_schedule="scaled_linear",
    trained_betas=None,
    set_alpha_to_one=False,
    skip_prk_steps=True,
    steps_offset=1,
    clip_sample=False,
    prediction_type="epsilon",
    timestep_spacing="leading",
)


def make_text_encoder() -> CLIPTextModel:
    config = CLIPTextConfig(
        vocab_size=49408,  # the real CLIP BPE vocabulary (models/vocab/clip)
        hidden_size=TEXT_WIDTH,
        intermediate_size=4 * TEXT_WIDTH,
        num_hidden_layers=4,
        num_attention_heads=2,
        max_position_embeddings=77,
        hidden_act="quick_gelu",
        layer_norm_eps=1e-5,
        projection_dim=TEXT_WIDTH,
        bos_token_id=49406,
        eos_token_id=49407,
        pad_token_id=49407,
    )
    return CLIPTextModel(config)


def make_vae(scaling_factor: float = 1.0) -> AutoencoderKL:
    # Three levels -> two downsamplings: 64x64x3 images <-> 16x16x4 latents (VAE scale factor 4).
    return AutoencoderKL(
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * 3,
        up_block_types=("UpDecoderBlock2D",) * 3,
        block_out_channels=(32, 64, 64),
        layers_per_block=1,
        latent_channels=4,
        norm_num_groups=32,
        sample_size=64,
        scaling_factor=scaling_factor,
        mid_block_add_attention=True,
    )


def make_unet() -> UNet2DConditionModel:
    # SD 1.x's blocks over three levels (16x16, 8x8, 4x4 latents), with cross-attention at every level: at 4x4
    # each cell sees (through the convolutions' zero padding) where in the image it is, which is where position
    # words are easiest to act on. attention_head_dim counts heads (diffusers' legacy naming), 32 channels each.
    return UNet2DConditionModel(
        sample_size=16,
        in_channels=4,
        out_channels=4,
        down_block_types=("CrossAttnDownBlock2D",) * 3,
        mid_block_type="UNetMidBlock2DCrossAttn",
        up_block_types=("CrossAttnUpBlock2D",) * 3,
        block_out_channels=(64, 128, 128),
        layers_per_block=1,
        attention_head_dim=(2, 4, 4),
        cross_attention_dim=TEXT_WIDTH,
        norm_num_groups=32,
        norm_eps=1e-5,
        flip_sin_to_cos=True,
        freq_shift=0,
        use_linear_projection=False,
    )


def make_train_scheduler() -> DDPMScheduler:
    keys = ("num_train_timesteps", "beta_start", "beta_end", "beta_schedule", "trained_betas", "steps_offset",
            "clip_sample", "prediction_type", "timestep_spacing")
    return DDPMScheduler(**{k: SD_SCHEDULER_CONFIG[k] for k in keys})


def make_pipeline_scheduler() -> PNDMScheduler:
    """What the saved folder's scheduler/ holds (SD 1.x ships PNDM); samplers are built from its config."""
    # from_config drops the keys PNDM has no use for (clip_sample), as loading SD 1.x's own file does.
    return PNDMScheduler.from_config(SD_SCHEDULER_CONFIG)
