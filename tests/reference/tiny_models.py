"""Stable Diffusion components with random weights, for reference fixtures (needs torch, diffusers, transformers).

Every parameter is re-drawn from a seeded generator (diffusers starts several output convolutions at zero, which
would make whole layers invisible to a parity test), then rounded to an fp16-representable value, so a model saved
in fp16 and the fp32/fp64 model the references are computed with hold exactly the same numbers.

Used by make_fixtures.py (the tiny SD 1.x / SD 2.x models) and make_sd15_random.py (the full-size SD 1.5 shape).
"""
import json
import math
import pathlib

import torch
from torch import nn

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
CLIP_VOCAB_DIR = REPO / "models" / "vocab" / "clip"


def reinit_(model, seed, gain=1.0, gain_overrides=None, embedding_std=0.5):
    """Re-draws every parameter of `model` in place and rounds it to fp16-representable values.

    Linear/conv weights: normal, std = gain / sqrt(fan_in) (gain_overrides: {module name: gain}); biases: std 0.1.
    Group/layer norms: weight 1 + N(0, 0.1^2), bias N(0, 0.05^2). Embeddings: N(0, embedding_std^2).
    Raises if any parameter was not covered, so a new module type cannot silently keep its default init.
    """
    gain_overrides = dict(gain_overrides or {})
    g = torch.Generator().manual_seed(seed)

    def normal(shape, std, mean=0.0):
        return torch.randn(tuple(shape), generator=g, dtype=torch.float32) * std + mean

    covered = set()
    for mod_name, m in model.named_modules():
        params = dict(m.named_parameters(recurse=False))
        if not params:
            continue
        if isinstance(m, (nn.GroupNorm, nn.LayerNorm)):
            if m.weight is not None:
                m.weight.data = normal(m.weight.shape, 0.1, 1.0)
            if m.bias is not None:
                m.bias.data = normal(m.bias.shape, 0.05)
        elif isinstance(m, nn.Embedding):
            m.weight.data = normal(m.weight.shape, embedding_std)
        elif isinstance(m, (nn.Linear, nn.Conv1d, nn.Conv2d)):
            fan_in = m.weight[0].numel()
            used_gain = gain_overrides.pop(mod_name, gain)
            m.weight.data = normal(m.weight.shape, used_gain / math.sqrt(fan_in))
            if m.bias is not None:
                m.bias.data = normal(m.bias.shape, 0.1)
        else:
            for name, p in params.items():
                print(f"  reinit: {type(m).__name__} '{mod_name}.{name}' gets N(0, 0.1^2)")
                p.data = normal(p.shape, 0.1)
        covered.update(f"{mod_name}.{k}" if mod_name else k for k in params)
    if gain_overrides:
        raise KeyError(f"gain overrides name no linear/conv module: {sorted(gain_overrides)}")
    missing = {n for n, _ in model.named_parameters()} - covered
    if missing:
        raise RuntimeError(f"parameters not re-initialised: {sorted(missing)[:10]}")
    round_to_fp16_(model)
    return model


@torch.no_grad()
def round_to_fp16_(model):
    for p in model.parameters():
        p.data = p.data.half().float()


def random_fp16_tensor(shape, std, seed_or_generator, mean=0.0):
    g = (seed_or_generator if isinstance(seed_or_generator, torch.Generator)
         else torch.Generator().manual_seed(seed_or_generator))
    return (torch.randn(tuple(shape), generator=g) * std + mean).half()


def read_clip_vocab():
    vocab = json.loads((CLIP_VOCAB_DIR / "vocab.json").read_text(encoding="utf-8"))
    lines = (CLIP_VOCAB_DIR / "merges.txt").read_text(encoding="utf-8").split("\n")
    if not lines[0].startswith("#version"):
        raise ValueError("models/vocab/clip/merges.txt lacks its '#version' header")
    merges = [tuple(line.split(" ")) for line in lines[1:] if line]
    if len(vocab) != 49408 or len(merges) != 48894 or any(len(m) != 2 for m in merges):
        raise ValueError(f"unexpected CLIP vocabulary: {len(vocab)} tokens, {len(merges)} merges")
    return vocab, merges


def clip_tokenizer(pad_token):
    """The CLIP tokenizer from the repository's vocabulary, as transformers builds it (max length 77)."""
    from transformers import CLIPTokenizer
    vocab, merges = read_clip_vocab()
    return CLIPTokenizer(vocab=vocab, merges=merges, pad_token=pad_token, model_max_length=77)


# ---------------------------------------------------------------------------------------------------------------
# The tiny models

SCHEDULER_SD15 = dict(
    num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", steps_offset=1,
    set_alpha_to_one=False, clip_sample=False, prediction_type="epsilon", timestep_spacing="leading",
)

TINY = {
    "sd1": dict(
        folder="tiny-sd1",
        seed=1000,
        text=dict(vocab_size=49408, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                  max_position_embeddings=77, hidden_act="quick_gelu", projection_dim=32, layer_norm_eps=1e-5,
                  bos_token_id=49406, eos_token_id=49407, pad_token_id=49407),
        pad_token="<|endoftext|>",
        text_kind="clip",
        unet=dict(sample_size=8, in_channels=4, out_channels=4, block_out_channels=(32, 64), layers_per_block=1,
                  down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                  up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
                  cross_attention_dim=32, attention_head_dim=4, norm_num_groups=32, use_linear_projection=False),
        vae=dict(in_channels=3, out_channels=3, block_out_channels=(32, 64), layers_per_block=1, latent_channels=4,
                 down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
                 up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), norm_num_groups=32, sample_size=16),
        scheduler=dict(SCHEDULER_SD15),
    ),
    "sd2": dict(
        folder="tiny-sd2",
        seed=2000,
        text=dict(vocab_size=49408, hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4,
                  max_position_embeddings=77, hidden_act="gelu", projection_dim=32, layer_norm_eps=1e-5,
                  bos_token_id=49406, eos_token_id=49407, pad_token_id=0),
        pad_token="!",
        text_kind="openclip",
        unet=dict(sample_size=8, in_channels=4, out_channels=4, block_out_channels=(32, 64), layers_per_block=1,
                  down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                  up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
                  cross_attention_dim=32, attention_head_dim=(2, 4), norm_num_groups=32,
                  use_linear_projection=True, upcast_attention=True),
        vae=dict(in_channels=3, out_channels=3, block_out_channels=(32, 64), layers_per_block=1, latent_channels=4,
                 down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
                 up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), norm_num_groups=32, sample_size=16),
        scheduler=dict(SCHEDULER_SD15, prediction_type="v_prediction", timestep_spacing="trailing"),
    ),
}

# The VAE decoder's last convolution gets a smaller gain so that most decoded pixels stay inside [-1, 1], where
# the pipeline's clamp to [0, 1] does not hide differences.
VAE_GAINS = {"decoder.conv_out": 0.6}


def build_components(spec):
    """Returns dict(text_encoder, tokenizer, unet, vae, scheduler), fp32, weights fp16-representable."""
    from diffusers import AutoencoderKL, DDIMScheduler, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    seed = spec["seed"]
    torch.manual_seed(seed)  # only the constructors' default init draws from it; every parameter is re-drawn
    text_encoder = CLIPTextModel(CLIPTextConfig(**spec["text"])).eval()
    unet = UNet2DConditionModel(**spec["unet"]).eval()
    vae = AutoencoderKL(**spec["vae"]).eval()
    reinit_(text_encoder, seed + 1)
    reinit_(unet, seed + 2)
    reinit_(vae, seed + 3, gain_overrides=VAE_GAINS)
    return dict(text_encoder=text_encoder, tokenizer=clip_tokenizer(spec["pad_token"]), unet=unet, vae=vae,
                scheduler=DDIMScheduler.from_config(spec["scheduler"]))


# Inpainting UNets (9 input channels: latents, mask, masked-image latents), the shape of the base model's UNet
# otherwise, as stable-diffusion-inpainting is SD 1.5's. Only the UNet is new: the pipeline uses the base model's
# text encoder, tokenizer, VAE and scheduler.
INPAINT = {
    "sd1": dict(folder="tiny-sd1-inpaint", seed=1500),
}


def build_inpaint_unet(key):
    """The 9-channel UNet of INPAINT[key], fp32, weights fp16-representable."""
    from diffusers import UNet2DConditionModel
    seed = INPAINT[key]["seed"]
    torch.manual_seed(seed)  # only the constructor's default init draws from it; every parameter is re-drawn
    unet = UNet2DConditionModel(**dict(TINY[key]["unet"], in_channels=9)).eval()
    reinit_(unet, seed + 2)
    return unet


def openclip_extra_block(index, width, intermediate, seed):
    """One more OpenCLIP resblock (random) and text_projection/logit_scale, as SD 2.x checkpoints hold them."""
    g = torch.Generator().manual_seed(seed)
    p = f"transformer.resblocks.{index}."
    t = {
        p + "ln_1.weight": random_fp16_tensor([width], 0.1, g, 1.0),
        p + "ln_1.bias": random_fp16_tensor([width], 0.05, g),
        p + "attn.in_proj_weight": random_fp16_tensor([3 * width, width], 1 / math.sqrt(width), g),
        p + "attn.in_proj_bias": random_fp16_tensor([3 * width], 0.1, g),
        p + "attn.out_proj.weight": random_fp16_tensor([width, width], 1 / math.sqrt(width), g),
        p + "attn.out_proj.bias": random_fp16_tensor([width], 0.1, g),
        p + "ln_2.weight": random_fp16_tensor([width], 0.1, g, 1.0),
        p + "ln_2.bias": random_fp16_tensor([width], 0.05, g),
        p + "mlp.c_fc.weight": random_fp16_tensor([intermediate, width], 1 / math.sqrt(width), g),
        p + "mlp.c_fc.bias": random_fp16_tensor([intermediate], 0.1, g),
        p + "mlp.c_proj.weight": random_fp16_tensor([width, intermediate], 1 / math.sqrt(intermediate), g),
        p + "mlp.c_proj.bias": random_fp16_tensor([width], 0.1, g),
        "text_projection": random_fp16_tensor([width, width], 1 / math.sqrt(width), g),
        "logit_scale": torch.tensor(math.log(1 / 0.07)).half(),
    }
    return t
