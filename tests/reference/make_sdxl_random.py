#!/usr/bin/env python3
"""Full-size SDXL base 1.0 architecture with random weights, and its reference outputs (GPU machine; issue 22).

  python3 tests/reference/make_sdxl_random.py MODEL_DIR REF_DIR [--config sdxl|tiny] [--device cuda]
                                              [--image-runs N]

MODEL_DIR receives sdxl-random/ (a StableDiffusionXLPipeline folder, fp16: two text encoders, both tokenizers as
vocab.json + merges.txt, the UNet with text_time added conditioning, the VAE with force_upcast). REF_DIR receives
sdxl_random.json and sdxl_random.{fp32,fp16}.safetensors (what tests/model_check/sdgen_model_check --refs reads):
  text_encoder.ids [N,77] int64 (tokenizer), text_encoder.penultimate [N,77,768] (hidden_states[-2]),
  text_encoder_2.ids [N,77] (tokenizer_2, pads with "!"), text_encoder_2.penultimate [N,77,1280],
  text_encoder_2.last_hidden_state [N,77,1280], text_encoder_2.text_embeds [N,1280] (pooled, projected);
  unet.sample [2,4,L,L], unet.context [2,77,2048], unet.text_embeds [2,1280], unet.time_ids [2,6]
  (L*8 square, no crop), unet.noise_pred [2,4,L,L] at timestep 500;
  vae.latents [1,4,L,L] (as given to vae.decode), vae.decoded [1,3,8L,8L] — the VAE always in fp32, as
  diffusers upcasts a force_upcast VAE (sdgen does the same in fp16 mode), so both files hold the fp32 decode.
fp32 runs with TF32 off; fp16 is the model cast with .half() on the same inputs. Weights are fp16-representable.
On CUDA it also times diffusers' UNet step on the same inputs (eager and replayed as a CUDA graph, batch 2) and,
with --image-runs N > 0, N StableDiffusionXLPipeline images at L*8 square (20 steps, Euler, CFG 5, fp16, VAE
upcast) with their wall time and peak memory (torch.cuda.max_memory_allocated): the references of issue 22's step
and memory bars. `--config tiny` builds tests/data/tiny-sdxl's weights instead (sdxl_fixtures.build_pipeline from
tests/data/tiny-sd1: the same bytes), whose references at 64x64 are tests/data/fixtures/sdxl_tiny/ (CI runs
sdgen_model_check on them: this script's outputs are what the H100 run reads).
Needs torch, diffusers, transformers (docs/reference-fixtures.md).
"""
import argparse
import copy
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "bench" / "reference"))  # cuda_timing, shared with the bench scripts

import torch  # noqa: E402

import make_fixtures as mf  # noqa: E402
import make_sd15_random  # noqa: E402  (time_unet and its TIMESTEP)
import sdxl_fixtures  # noqa: E402
import tiny_models  # noqa: E402

SDXL = dict(
    seed=2200,
    # openai/clip-vit-large-patch14's text tower (SDXL base's text_encoder)
    text=dict(vocab_size=49408, hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
              num_attention_heads=12, max_position_embeddings=77, hidden_act="quick_gelu", projection_dim=768,
              layer_norm_eps=1e-5, bos_token_id=49406, eos_token_id=49407, pad_token_id=49407),
    # OpenCLIP ViT-bigG/14's text tower with its projection (SDXL base's text_encoder_2/config.json)
    text_2=dict(vocab_size=49408, hidden_size=1280, intermediate_size=5120, num_hidden_layers=32,
                num_attention_heads=20, max_position_embeddings=77, hidden_act="gelu", projection_dim=1280,
                layer_norm_eps=1e-5, bos_token_id=0, eos_token_id=2, pad_token_id=1),
    unet=dict(sample_size=128, in_channels=4, out_channels=4, block_out_channels=(320, 640, 1280),
              layers_per_block=2, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
              up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
              transformer_layers_per_block=(1, 2, 10), attention_head_dim=(5, 10, 20), cross_attention_dim=2048,
              norm_num_groups=32, use_linear_projection=True, addition_embed_type="text_time",
              addition_time_embed_dim=256, projection_class_embeddings_input_dim=2816),
    vae=dict(in_channels=3, out_channels=3, block_out_channels=(128, 256, 512, 512), layers_per_block=2,
             latent_channels=4, down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
             norm_num_groups=32, sample_size=1024, scaling_factor=0.13025, force_upcast=True),
    scheduler=sdxl_fixtures.SCHEDULER,
    latent=128,
)

# tests/data/tiny-sdxl's weights exactly (sdxl_fixtures.build_pipeline from tiny-sd1): its references are the
# committed tests/data/fixtures/sdxl_tiny/, which CI checks with sdgen_model_check on tests/data/tiny-sdxl.
TINY = dict(latent=8)
REPO = HERE.parent.parent

PROMPTS = ["a red circle on a blue background", "", "a photo of an astronaut riding a horse on the moon",
           "masterpiece, best quality, (detailed eyes:1.2), 8k wallpaper"]
TIMESTEP = make_sd15_random.TIMESTEP  # the step time_unet times
IMAGE_PROMPT = "a photo of an astronaut riding a horse on the moon"


def build(spec):
    from diffusers import AutoencoderKL, EulerDiscreteScheduler, StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection
    seed = spec["seed"]
    torch.manual_seed(seed)
    te = CLIPTextModel(CLIPTextConfig(**spec["text"])).eval()
    te2 = CLIPTextModelWithProjection(CLIPTextConfig(**spec["text_2"])).eval()
    unet = UNet2DConditionModel(**spec["unet"]).eval()
    vae = AutoencoderKL(**spec["vae"]).eval()
    tiny_models.reinit_(te, seed + 1)
    tiny_models.reinit_(te2, seed + 2)
    tiny_models.reinit_(unet, seed + 3)
    tiny_models.reinit_(vae, seed + 4, gain_overrides=tiny_models.VAE_GAINS)
    pipe = StableDiffusionXLPipeline(
        vae=vae, text_encoder=te, text_encoder_2=te2, tokenizer=tiny_models.clip_tokenizer("<|endoftext|>"),
        tokenizer_2=tiny_models.clip_tokenizer("!"), unet=unet,
        scheduler=EulerDiscreteScheduler.from_config(spec["scheduler"]), force_zeros_for_empty_prompt=True,
        add_watermarker=False)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def rename_text_keys(path):
    """transformers 5 saves a CLIPTextModel(WithProjection) made from scratch without the 'text_model.' level; the
    published SDXL folders have it (sdxl_fixtures.text_key)."""
    from safetensors import safe_open
    from safetensors.torch import save_file
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        keys = list(f.keys())
    if all(sdxl_fixtures.text_key(k) == k for k in keys):
        return
    sd = mf.load_safetensors(path)
    save_file({sdxl_fixtures.text_key(k): v for k, v in sd.items()}, str(path), metadata=meta)


def save(pipe, model_dir):
    folder = model_dir / "sdxl-random"
    mods = [pipe.text_encoder, pipe.text_encoder_2, pipe.unet, pipe.vae]
    for m in mods:
        m.half()
    pipe.save_pretrained(str(folder), safe_serialization=True)
    for m in mods:
        m.float()
    for sub in ("text_encoder", "text_encoder_2"):
        rename_text_keys(folder / sub / "model.safetensors")
    for sub in ("tokenizer", "tokenizer_2"):  # SDXL base's layout: vocab.json + merges.txt
        d = folder / sub
        for f in ("vocab.json", "merges.txt"):
            (d / f).write_bytes((tiny_models.CLIP_VOCAB_DIR / f).read_bytes())
        (d / "tokenizer.json").unlink(missing_ok=True)
    return folder


def token_ids(tokenizer):
    return torch.stack([tokenizer(p, padding="max_length", max_length=77, truncation=True,
                                  return_tensors="pt").input_ids[0] for p in PROMPTS])


@torch.no_grad()
def references(pipe, device, dtype, latent):
    te = copy.deepcopy(pipe.text_encoder).to(device=device, dtype=dtype).eval()
    te2 = copy.deepcopy(pipe.text_encoder_2).to(device=device, dtype=dtype).eval()
    unet = copy.deepcopy(pipe.unet).to(device=device, dtype=dtype).eval()
    vae = copy.deepcopy(pipe.vae).to(device=device, dtype=torch.float32).eval()  # force_upcast: always fp32
    ids, ids2 = token_ids(pipe.tokenizer), token_ids(pipe.tokenizer_2)
    o1 = te(ids.to(device), output_hidden_states=True)
    o2 = te2(ids2.to(device), output_hidden_states=True)
    g = torch.Generator().manual_seed(7)
    n, size = 2, latent * 8
    sample = torch.randn((n, 4, latent, latent), generator=g)
    context = torch.randn((n, 77, unet.config.cross_attention_dim), generator=g)  # the same in every precision
    embeds = torch.randn((n, pipe.text_encoder_2.config.projection_dim), generator=g)
    time_ids = torch.tensor([[size, size, 0, 0, size, size]] * n, dtype=torch.float32)
    cond = {"text_embeds": embeds.to(device, dtype), "time_ids": time_ids.to(device, dtype)}
    t = torch.full((n,), TIMESTEP, dtype=torch.int64, device=device)
    pred = unet(sample.to(device, dtype), t, encoder_hidden_states=context.to(device, dtype),
                added_cond_kwargs=cond).sample
    timing = (make_sd15_random.time_unet(unet, sample.to(device, dtype), context.to(device, dtype),
                                         added_cond_kwargs=cond) if device != "cpu" else None)
    latents = torch.randn((1, 4, latent, latent), generator=g)
    decoded = vae.decode(latents.to(device)).sample
    r = {"text_encoder.ids": ids, "text_encoder.penultimate": o1.hidden_states[-2],
         "text_encoder_2.ids": ids2, "text_encoder_2.penultimate": o2.hidden_states[-2],
         "text_encoder_2.last_hidden_state": o2.last_hidden_state, "text_encoder_2.text_embeds": o2.text_embeds,
         "unet.sample": sample, "unet.context": context, "unet.text_embeds": embeds, "unet.time_ids": time_ids,
         "unet.noise_pred": pred, "vae.latents": latents, "vae.decoded": decoded}
    return {k: v.detach().float().cpu() if v.is_floating_point() else v.cpu() for k, v in r.items()}, timing


def image_runs(folder, latent, runs):
    """StableDiffusionXLPipeline from the saved folder in fp16 on CUDA (the VAE upcast, as force_upcast says):
    wall time and peak memory of `runs` images at latent*8 square, 20 Euler steps, CFG 5, after one warm-up."""
    from diffusers import StableDiffusionXLPipeline
    t0 = time.perf_counter()
    pipe = StableDiffusionXLPipeline.from_pretrained(str(folder), torch_dtype=torch.float16, local_files_only=True,
                                                     add_watermarker=False).to("cuda")
    load_s = time.perf_counter() - t0
    pipe.set_progress_bar_config(disable=True)
    size = latent * 8
    kw = dict(prompt=IMAGE_PROMPT, negative_prompt="blurry", height=size, width=size, num_inference_steps=20,
              guidance_scale=5.0, output_type="np")
    pipe(generator=torch.Generator("cuda").manual_seed(1), **kw)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    ms = []
    for i in range(runs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        pipe(generator=torch.Generator("cuda").manual_seed(2 + i), **kw)
        torch.cuda.synchronize()
        ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    return {"size": size, "steps": 20, "runs": runs, "median_ms": ms[len(ms) // 2], "min_ms": ms[0], "max_ms": ms[-1],
            "load_s": load_s, "peak_memory_bytes": torch.cuda.max_memory_allocated(),
            "resident_weights_bytes": sum(p.numel() * p.element_size() for m in (pipe.unet, pipe.vae, pipe.text_encoder,
                                                                                  pipe.text_encoder_2)
                                          for p in m.parameters())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir", type=pathlib.Path)
    ap.add_argument("ref_dir", type=pathlib.Path)
    ap.add_argument("--config", choices=["sdxl", "tiny"], default="sdxl")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--image-runs", type=int, default=0, help="diffusers images to time on CUDA (0: none)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    spec = SDXL if args.config == "sdxl" else TINY
    args.model_dir.mkdir(parents=True, exist_ok=True)
    args.ref_dir.mkdir(parents=True, exist_ok=True)

    mf.log(f"building {args.config}; versions {mf.versions()}; device {args.device}")
    pipe = build(spec) if args.config == "sdxl" else sdxl_fixtures.build_pipeline(REPO / "tests" / "data" / "tiny-sd1")
    for name in ("text_encoder", "text_encoder_2", "unet", "vae"):
        mf.log(f"{name}: {sum(p.numel() for p in getattr(pipe, name).parameters())} parameters")
    folder = save(pipe, args.model_dir)
    mf.log(f"saved {folder}")

    summary = {}
    for label, dtype in (("fp32", torch.float32), ("fp16", torch.float16)):
        t, timing = references(pipe, args.device, dtype, spec["latent"])
        mf.write_tensors(args.ref_dir / f"sdxl_random.{label}.safetensors", t, limit=64 << 20)
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
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    images = None
    if args.image_runs > 0 and args.device.startswith("cuda"):
        del pipe
        images = image_runs(folder, spec["latent"], args.image_runs)
        mf.log(f"diffusers images: {images}")
    mf.write_json(args.ref_dir / "sdxl_random.json", {
        "about": "full-size SDXL base 1.0 architecture with random fp16-representable weights; make_sdxl_random.py",
        "config": args.config, "model": str(folder), "prompts": PROMPTS, "timestep": TIMESTEP,
        "device": args.device, "tf32": False,
        "inputs": ("torch.Generator().manual_seed(7): unet.sample [2,4,L,L], unet.context [2,77,2048], "
                   "unet.text_embeds [2,1280], then vae.latents [1,4,L,L], drawn in fp32 and cast per run; "
                   "time_ids (8L, 8L, 0, 0, 8L, 8L)"),
        "versions": mf.versions(), "summary": summary, "diffusers_images": images})


if __name__ == "__main__":
    main()
