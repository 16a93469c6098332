#!/usr/bin/env python3
"""Full-size Stable Diffusion 1.5 architecture with random weights, and its reference outputs (GPU machine).

  python3 tests/reference/make_sd15_random.py MODEL_DIR REF_DIR [--config sd15|tiny] [--device cuda] [--fp64]

MODEL_DIR receives sd15-random/ (a diffusers folder, fp16, SD 1.5 layout: tokenizer as vocab.json + merges.txt)
and sd15-random-ldm.safetensors (the same weights under the original CompVis names, via ldm_names.py, checked
back through both our parser and diffusers' single-file converters). REF_DIR receives sd15_random.json and
sd15_random.{fp32,fp16}.safetensors (and .fp64 with --fp64, computed on the CPU):
  text_encoder.ids [N,77] int64, text_encoder.last_hidden_state [N,77,768];
  unet.sample [2,4,64,64], unet.context [2,77,768] (random, std 1), unet.noise_pred
  [2,4,64,64] at timestep 500; vae.latents [1,4,64,64] (as given to vae.decode), vae.decoded [1,3,512,512];
  vae.image [1,3,512,512] (uniform in [-1, 1]) and vae.encoded_mean [1,4,64,64], its encoder's latent mean.
fp32 runs with TF32 off; fp16 is the model cast with .half() on the same inputs. Weights are fp16-representable,
so all precisions hold the same numbers. `--config tiny` swaps in the tiny SD 1.x shapes of make_fixtures.py (a
quick check of this script). On CUDA it also times diffusers' UNet step on the same inputs (eager and replayed
as a CUDA graph; peak memory with the text encoder and VAE resident too) into sd15_random.json, the reference for
the engine's step time measured in the same device call (scripts/device/check-sd15.sh). Needs torch, diffusers,
transformers (see docs/reference-fixtures.md).
"""
import argparse
import copy
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "bench" / "reference"))  # cuda_timing, shared with the bench scripts

import torch  # noqa: E402

import make_fixtures as mf  # noqa: E402
from cuda_timing import time_ms  # noqa: E402
import tiny_models  # noqa: E402

SD15 = dict(
    seed=1500,
    # openai/clip-vit-large-patch14's text tower
    text=dict(vocab_size=49408, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
              num_attention_heads=12, max_position_embeddings=77, hidden_act="quick_gelu", projection_dim=768,
              layer_norm_eps=1e-5, bos_token_id=49406, eos_token_id=49407, pad_token_id=49407),
    pad_token="<|endoftext|>",
    unet=dict(sample_size=64, in_channels=4, out_channels=4, block_out_channels=(320, 640, 1280, 1280),
              layers_per_block=2,
              down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D",
                                "DownBlock2D"),
              up_block_types=("UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
              cross_attention_dim=768, attention_head_dim=8, norm_num_groups=32, use_linear_projection=False),
    vae=dict(in_channels=3, out_channels=3, block_out_channels=(128, 256, 512, 512), layers_per_block=2,
             latent_channels=4, down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
             norm_num_groups=32, sample_size=512),
    # SD 1.5 ships a PNDMScheduler config; every sampler of sdgen reads the same fields
    scheduler=dict(tiny_models.SCHEDULER_SD15, skip_prk_steps=True),
    scheduler_class="PNDMScheduler",
    latent=64,
)

TINY = dict(tiny_models.TINY["sd1"], scheduler_class="DDIMScheduler", latent=8)

PROMPTS = ["a red circle on a blue background", "", "a photo of an astronaut riding a horse on the moon",
           "masterpiece, best quality, (detailed eyes:1.2), 8k wallpaper"]
TIMESTEP = 500


def build(spec):
    import diffusers
    from diffusers import AutoencoderKL, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel
    seed = spec["seed"]
    torch.manual_seed(seed)
    te = CLIPTextModel(CLIPTextConfig(**spec["text"])).eval()
    unet = UNet2DConditionModel(**spec["unet"]).eval()
    vae = AutoencoderKL(**spec["vae"]).eval()
    tiny_models.reinit_(te, seed + 1)
    tiny_models.reinit_(unet, seed + 2)
    tiny_models.reinit_(vae, seed + 3, gain_overrides=tiny_models.VAE_GAINS)
    sched = getattr(diffusers, spec["scheduler_class"]).from_config(spec["scheduler"])
    pipe = StableDiffusionPipeline(vae=vae, text_encoder=te, tokenizer=tiny_models.clip_tokenizer(spec["pad_token"]),
                                   unet=unet, scheduler=sched, safety_checker=None, feature_extractor=None,
                                   requires_safety_checker=False)
    return pipe


def save(pipe, model_dir, ldm=True):
    """The fp16 diffusers folder and, unless ldm is False, the same weights as one LDM single file."""
    folder = model_dir / "sd15-random"
    mods = [pipe.text_encoder, pipe.unet, pipe.vae]
    for m in mods:
        m.half()
    pipe.save_pretrained(str(folder), safe_serialization=True)
    for m in mods:
        m.float()
    mf.fix_text_encoder_names(folder)
    mf.fix_tokenizer_folder(folder, "sd1")
    if not ldm:
        return folder, None
    report = mf.write_ldm_from_folder(folder, model_dir / "sd15-random-ldm.safetensors", "clip", 0, "sd15")
    return folder, report


@torch.no_grad()
def references(pipe, device, dtype, latent):
    te = copy.deepcopy(pipe.text_encoder).to(device=device, dtype=dtype).eval()
    unet = copy.deepcopy(pipe.unet).to(device=device, dtype=dtype).eval()
    vae = copy.deepcopy(pipe.vae).to(device=device, dtype=dtype).eval()
    ids = torch.stack([pipe.tokenizer(p, padding="max_length", max_length=77, truncation=True,
                                      return_tensors="pt").input_ids[0] for p in PROMPTS])
    hidden = te(ids.to(device)).last_hidden_state
    g = torch.Generator().manual_seed(7)
    sample = torch.randn((2, 4, latent, latent), generator=g)
    context = torch.randn((2, 77, unet.config.cross_attention_dim), generator=g)  # the same in every precision
    pred = unet(sample.to(device, dtype), torch.full((2,), TIMESTEP, dtype=torch.int64, device=device),
                encoder_hidden_states=context.to(device, dtype)).sample
    timing = time_unet(unet, sample.to(device, dtype), context.to(device, dtype)) if device != "cpu" else None
    latents = torch.randn((1, 4, latent, latent), generator=g)
    decoded = vae.decode(latents.to(device, dtype)).sample
    image = torch.rand((1, 3, latent * 8, latent * 8), generator=g) * 2 - 1
    encoded = vae.encode(image.to(device, dtype)).latent_dist.mean
    t = {"text_encoder.ids": ids, "text_encoder.last_hidden_state": hidden, "unet.sample": sample,
         "unet.context": context, "unet.noise_pred": pred, "vae.latents": latents, "vae.decoded": decoded,
         "vae.image": image, "vae.encoded_mean": encoded}
    return {k: v.detach().float().cpu() if v.is_floating_point() else v.cpu() for k, v in t.items()}, timing


def time_unet(unet, sample, context, warmup=5, runs=30, added_cond_kwargs=None):
    """diffusers' UNet step on the same inputs as the engine's check, timed in the same device call: eager and
    replayed as a CUDA graph, CUDA events, median / p10 / p90 of `runs` after `warmup`, and the peak memory.
    added_cond_kwargs: SDXL's text_embeds and time_ids (make_sdxl_random.py)."""
    t = torch.full((sample.shape[0],), TIMESTEP, dtype=torch.int64, device=sample.device)
    extra = {"added_cond_kwargs": added_cond_kwargs} if added_cond_kwargs is not None else {}

    def step():
        return unet(sample, t, encoder_hidden_states=context, **extra)

    def measure(fn):
        r = time_ms(fn, warmup, runs)
        return {"median_ms": r["median"], "p10_ms": r["p10"], "p90_ms": r["p90"], "runs": runs}

    torch.cuda.reset_peak_memory_stats()
    eager = measure(step)
    peak = torch.cuda.max_memory_allocated()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    graphed = measure(graph.replay)
    return {"eager": eager, "cuda_graph": graphed, "peak_memory_bytes_eager": peak}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir", type=pathlib.Path)
    ap.add_argument("ref_dir", type=pathlib.Path)
    ap.add_argument("--config", choices=["sd15", "tiny"], default="sd15")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--fp64", action="store_true", help="also compute float64 references on the CPU")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    spec = SD15 if args.config == "sd15" else TINY
    args.model_dir.mkdir(parents=True, exist_ok=True)
    args.ref_dir.mkdir(parents=True, exist_ok=True)

    mf.log(f"building {args.config}; versions {mf.versions()}; device {args.device}")
    pipe = build(spec)
    for name in ("text_encoder", "unet", "vae"):
        mf.log(f"{name}: {sum(p.numel() for p in getattr(pipe, name).parameters())} parameters")
    folder, ldm_report = save(pipe, args.model_dir)
    mf.log(f"saved {folder} and the LDM file; {ldm_report['diffusers_single_file_converters']}")

    runs = [("fp32", args.device, torch.float32), ("fp16", args.device, torch.float16)]
    if args.fp64:
        runs.append(("fp64", "cpu", torch.float64))
    summary = {}
    for label, device, dtype in runs:
        t, timing = references(pipe, device, dtype, spec["latent"])
        limit = 64 << 20
        mf.write_tensors(args.ref_dir / f"sd15_random.{label}.safetensors", t, limit=limit)
        summary[label] = {k: {"shape": list(v.shape), "absmax": float(v.abs().max()) if v.is_floating_point()
                              else None, "finite": bool(torch.isfinite(v.float()).all())} for k, v in t.items()}
        mf.log(f"{label}: " + ", ".join(f"{k} absmax {s['absmax']}" for k, s in summary[label].items()
                                        if s["absmax"] is not None))
        if timing:
            summary[label]["torch_unet_step"] = timing
            mf.log(f"{label}: torch UNet step, batch 2: eager {timing['eager']['median_ms']:.3f} ms (p10 "
                   f"{timing['eager']['p10_ms']:.3f}, p90 {timing['eager']['p90_ms']:.3f}), CUDA graph "
                   f"{timing['cuda_graph']['median_ms']:.3f} ms (p10 {timing['cuda_graph']['p10_ms']:.3f}, p90 "
                   f"{timing['cuda_graph']['p90_ms']:.3f}); peak memory {timing['peak_memory_bytes_eager'] / 2**20:.0f} MiB")
    mf.write_json(args.ref_dir / "sd15_random.json", {
        "about": "full-size SD 1.5 architecture with random fp16-representable weights; make_sd15_random.py",
        "config": args.config, "model": str(folder), "ldm": str(args.model_dir / "sd15-random-ldm.safetensors"),
        "prompts": PROMPTS, "timestep": TIMESTEP, "device": args.device, "tf32": False,
        "inputs": ("torch.Generator().manual_seed(7): unet.sample [2,4,L,L], unet.context [2,77,D], then "
                   "vae.latents [1,4,L,L], drawn in fp32 and cast per run"),
        "ldm_check": ldm_report, "versions": mf.versions(), "summary": summary})


if __name__ == "__main__":
    main()
