"""Section `sdxlrefiner` of make_fixtures.py (issue 22): a tiny random SDXL refiner and diffusers 0.42.1's
StableDiffusionXLImg2ImgPipeline references, alone and as the second model of the base + refiner ensemble.

tiny-sdxl-refiner/ is shaped like stable-diffusion-xl-refiner-1.0, only small: model_index.json of a
StableDiffusionXLImg2ImgPipeline with text_encoder and tokenizer [null, null], requires_aesthetics_score true,
force_zeros_for_empty_prompt false (the refiner's), and
  text_encoder_2, tokenizer_2, vae, scheduler   tiny-sdxl's files byte for byte (git stores them once; the real
                  refiner's OpenCLIP bigG and VAE are the base's kind, its scheduler file the same)
  unet            a new UNet (122 k parameters, 245 KB in fp16): DownBlock2D then CrossAttnDownBlock2D,
                  block_out_channels (16, 16), transformer depth 2 at the second level and in the middle block,
                  linear projections, GroupNorm(4) (with groups of one channel each the norms would remove the time
                  embedding's per-channel shift, and the aesthetic score with it), cross_attention_dim 16
                  (text_encoder_2's width alone), addition_embed_type "text_time", addition_time_embed_dim 8,
                  projection_class_embeddings_input_dim 24 + 5 * 8 = 64 (five time ids: original size, crop,
                  aesthetic score)
The same model as one single-file checkpoint (the refiner's LDM layout: conditioner.embedders.0.model.* OpenCLIP
names, model.diffusion_model.*, first_stage_model.*) is written to tiny-sdxl-refiner-ldm.safetensors and checked
by loading it with StableDiffusionXLImg2ImgPipeline.from_single_file; like tiny-sdxl's it is not kept:
fixtures/ldm_map_sdxl_refiner.json says how each tensor is made from the folder's files.

Fixtures (fixtures/refiner_sdxl.{json,safetensors}, float32 pipelines on the CPU, 16x24 pixels):
  img2img.*   the refiner alone: StableDiffusionXLImg2ImgPipeline on fixtures/i2i_init.png (the SD img2img runs'
              init image and order of draws: the encoder's sample, then the noise, then ancestral step noise)
              per IMG2IMG_RUNS: samplers x strengths with the default aesthetic scores (6, 2.5), explicit
              aesthetic scores with original size / crop / negative original size / negative crop, and no
              negative prompt (force_zeros_for_empty_prompt false: the empty string is encoded)
  ensemble.*  the base + refiner ensemble per ENSEMBLE_RUNS: tiny-sdxl's StableDiffusionXLPipeline with
              denoising_end=F and output_type "latent", then the refiner with image=those latents and
              denoising_start=F (no re-noising: add_noise False), each call with a fresh
              torch.Generator("cpu").manual_seed(seed); the base's latents, the step counts and timesteps of
              both parts, and the image; ENSEMBLE_IMG2IMG_RUNS the same with an image-to-image base
              (StableDiffusionXLImg2ImgPipeline on the init image at a strength, then denoising_end)
Each run records add_time_ids / add_neg_time_ids as the pipeline computed them (_get_add_time_ids captured).
"""
import json

import torch

import ldm_names
import tiny_models
from image_to_image import Capture, INPUT_FILES, write_inputs
from real_checkpoints import base_folder
import sdxl_fixtures

FOLDER = "tiny-sdxl-refiner"
SEED = 3100
ADD_TIME_DIM = 8
TEXT_2_WIDTH, TEXT_2_PROJECTION = sdxl_fixtures.TEXT_2["hidden_size"], sdxl_fixtures.TEXT_2["projection_dim"]
UNET = dict(sample_size=8, in_channels=4, out_channels=4, block_out_channels=(16, 16), layers_per_block=1,
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
            transformer_layers_per_block=(1, 2), cross_attention_dim=TEXT_2_WIDTH,
            attention_head_dim=(2, 2), norm_num_groups=4, use_linear_projection=True,
            addition_embed_type="text_time", addition_time_embed_dim=ADD_TIME_DIM,
            projection_class_embeddings_input_dim=TEXT_2_PROJECTION + 5 * ADD_TIME_DIM)

PROMPT, NEGATIVE = "a red circle on a blue background", "blurry"
HEIGHT, WIDTH = 16, 24
STEPS, GUIDANCE = 6, 7.5
IMG2IMG_SEED, ENSEMBLE_SEED = 1234, 2024
ENSEMBLE_STEPS, ENSEMBLE_GUIDANCE = 10, 5.0
# id -> (sampler, strength, extra pipeline kwargs)
IMG2IMG_RUNS = {
    "euler.s075": ("euler", 0.75, {}),
    "euler.s050": ("euler", 0.5, {}),
    "dpmpp_2m.s075": ("dpmpp_2m", 0.75, {}),
    "euler_a.s060": ("euler_a", 0.6, {}),
    "ddim.s075": ("ddim", 0.75, {}),
    "euler.s075.aesthetic": ("euler", 0.75, dict(aesthetic_score=8.5, negative_aesthetic_score=1.0)),
    "euler.s075.microcond": ("euler", 0.75, dict(original_size=(40, 56), crops_coords_top_left=(4, 8),
                                                negative_original_size=(32, 48),
                                                negative_crops_coords_top_left=(2, 6))),
    "euler.s075.no_negative": ("euler", 0.75, dict(negative_prompt=None)),
}
# id -> (sampler, switch fraction)
ENSEMBLE_RUNS = {
    "euler.f080": ("euler", 0.8),
    "euler.f050": ("euler", 0.5),
    "euler_a.f080": ("euler_a", 0.8),
    "dpmpp_2m.f050": ("dpmpp_2m", 0.5),
    "ddim.f080": ("ddim", 0.8),
    # order-2 schedulers (2N - 1 timesteps, one per UNet evaluation): at 0.8 the base stops after the first
    # evaluation of step 7 and the refiner (diffusers' "+1 when even") starts again at that step's first
    "heun.f080": ("heun", 0.8),
    "dpm2_a.f050": ("dpm2_a", 0.5),
}
# id -> (sampler, switch fraction, strength): the base as StableDiffusionXLImg2ImgPipeline (tiny-sdxl's components,
# requires_aesthetics_score False) on the init image, stopping at denoising_end; the refiner as above
ENSEMBLE_IMG2IMG_RUNS = {
    "img2img.euler.f080": ("euler", 0.8, 0.75),
    "img2img.dpmpp_2m.f050": ("dpmpp_2m", 0.5, 0.8),
}
ORDER_2 = {"heun": "HeunDiscreteScheduler", "dpm2_a": "KDPM2AncestralDiscreteScheduler"}


def make_scheduler(h, name, base_config):
    """make_fixtures' schedulers, and the order-2 ones of the ensemble runs (their classes' defaults otherwise)."""
    if name in ORDER_2:
        import diffusers
        return getattr(diffusers, ORDER_2[name]).from_config(dict(base_config))
    return h.make_scheduler(name, base_config)


def log(h, msg):
    h.log(f"sdxlrefiner: {msg}")


def make_refiner_fixtures(out, h):
    folder = write_model(out, h)
    make_ensemble_refs(out, h, folder, make_img2img_refs(out, h, folder))
    write_ldm(out, h, folder)  # last: the references above do not depend on it


def load_refiner(folder):
    from diffusers import StableDiffusionXLImg2ImgPipeline
    pipe = StableDiffusionXLImg2ImgPipeline.from_pretrained(str(folder), torch_dtype=torch.float32,
                                                            local_files_only=True, add_watermarker=False)
    pipe.set_progress_bar_config(disable=True)
    if not pipe.config.requires_aesthetics_score or pipe.text_encoder is not None or pipe.tokenizer is not None:
        raise AssertionError(f"{folder} does not load as a refiner: {dict(pipe.config)}")
    return pipe


SHARED = ("text_encoder_2/config.json", "text_encoder_2/model.safetensors", "tokenizer_2/vocab.json",
          "tokenizer_2/merges.txt", "tokenizer_2/tokenizer_config.json", "tokenizer_2/special_tokens_map.json",
          "vae/config.json", "vae/diffusion_pytorch_model.safetensors", "scheduler/scheduler_config.json")


def write_model(out, h):
    from diffusers import StableDiffusionXLImg2ImgPipeline, UNet2DConditionModel
    base_dir = base_folder(out, sdxl_fixtures.FOLDER)
    base = sdxl_fixtures.load_pipeline(base_dir)
    torch.manual_seed(SEED)
    unet = UNet2DConditionModel(**UNET).eval()
    tiny_models.reinit_(unet, SEED + 1)
    pipe = StableDiffusionXLImg2ImgPipeline(
        vae=base.vae, text_encoder=None, text_encoder_2=base.text_encoder_2, tokenizer=None,
        tokenizer_2=base.tokenizer_2, unet=unet, scheduler=base.scheduler, requires_aesthetics_score=True,
        force_zeros_for_empty_prompt=False, add_watermarker=False)
    log(h, f"unet {sum(p.numel() for p in unet.parameters())} parameters")
    folder = out / FOLDER
    unet.half()
    pipe.save_pretrained(str(folder), safe_serialization=True)
    unet.float()
    for rel in SHARED:  # byte for byte (the same values: git stores them once)
        src = base_dir / rel
        if src.exists():
            (folder / rel).write_bytes(src.read_bytes())
        elif (folder / rel).exists():
            (folder / rel).unlink()
    (folder / "tokenizer_2" / "tokenizer.json").unlink(missing_ok=True)
    index = json.loads((folder / "model_index.json").read_text())
    if index.get("text_encoder") != [None, None] or index.get("requires_aesthetics_score") is not True or \
            index.get("force_zeros_for_empty_prompt") is not False:
        raise AssertionError(f"unexpected model_index.json: {index}")
    reloaded = load_refiner(folder)
    for name in ("text_encoder_2", "unet", "vae"):
        sdxl_fixtures.assert_same(getattr(pipe, name), getattr(reloaded, name), name)
    log(h, "reloaded folder matches; files: " + ", ".join(
        f"{p.relative_to(folder)} {p.stat().st_size}" for p in sorted(folder.rglob("*")) if p.is_file()))
    return folder


def run(pipe, seed, **kwargs):
    seen_latents, seen_t = [], []

    def on_step(p, i, ts, kw):
        seen_latents.append(kw["latents"].detach().clone())
        seen_t.append(float(ts))
        return {}

    ids = Capture(pipe, "_get_add_time_ids")
    result = pipe(generator=torch.Generator("cpu").manual_seed(seed), callback_on_step_end=on_step,
                  callback_on_step_end_tensor_inputs=["latents"], **kwargs)
    images = result.images if kwargs.get("output_type") == "latent" else torch.from_numpy(result.images.copy())
    return images, torch.stack(seen_latents), seen_t, ids.value


def time_ids_of(captured):
    """_get_add_time_ids of the img2img pipeline returns (add_time_ids, add_neg_time_ids); the base's one tensor."""
    if isinstance(captured, tuple):
        return captured[0][0], captured[1][0]
    return captured[0], None


@torch.no_grad()
def make_img2img_refs(out, h, folder):
    pipe = load_refiner(folder)
    base_config = dict(pipe.scheduler.config)
    pil, raw = write_inputs(out, h)
    t = {"init_rgb": raw["init_rgb"]}
    runs = []
    plain = {}
    for rid, (sampler, strength, extra) in IMG2IMG_RUNS.items():
        pipe.scheduler = h.make_scheduler(sampler, base_config)
        kwargs = dict(prompt=PROMPT, negative_prompt=NEGATIVE, image=pil["init"], strength=strength,
                      num_inference_steps=STEPS, guidance_scale=GUIDANCE, output_type="np")
        kwargs.update(extra)
        image, steps, seen_t, ids = run(pipe, IMG2IMG_SEED, **kwargs)
        pos, neg = time_ids_of(ids)
        t[f"img2img.{rid}.image"] = image
        t[f"img2img.{rid}.add_time_ids"] = pos
        t[f"img2img.{rid}.add_neg_time_ids"] = neg
        key = (sampler, strength)
        moved = None
        if not extra:
            plain[key] = image
        elif key in plain:
            moved = float((image - plain[key]).abs().mean()) * 255
        runs.append({"id": rid, "sampler": sampler, "strength": strength, "timesteps": seen_t,
                     "kwargs": {k: v for k, v in extra.items()},
                     "negative_prompt": kwargs["negative_prompt"],
                     "moved_from_default_x255": moved})
        log(h, f"img2img {rid}: timesteps {seen_t}, time ids {pos.tolist()} / {neg.tolist()}, image mean "
               f"{float(image.mean()):.4f}" + ("" if moved is None else f", moved {moved:.2f}/255 from the "
                                                                      "default conditioning"))
    return t, runs


@torch.no_grad()
def make_ensemble_refs(out, h, folder, img2img=None):
    refiner = load_refiner(folder)
    base = sdxl_fixtures.load_pipeline(base_folder(out, sdxl_fixtures.FOLDER))
    base_config = dict(base.scheduler.config)
    t, runs = img2img if img2img is not None else ({}, [])
    ens = []
    from diffusers import StableDiffusionXLImg2ImgPipeline
    base_i2i = StableDiffusionXLImg2ImgPipeline(**base.components, requires_aesthetics_score=False)
    base_i2i.set_progress_bar_config(disable=True)
    pil, _ = write_inputs(out, h)
    all_runs = {rid: (sampler, fraction, None) for rid, (sampler, fraction) in ENSEMBLE_RUNS.items()}
    all_runs.update(ENSEMBLE_IMG2IMG_RUNS)
    for rid, (sampler, fraction, strength) in all_runs.items():
        first = base if strength is None else base_i2i
        start = dict(height=HEIGHT, width=WIDTH) if strength is None else dict(image=pil["init"], strength=strength)
        first.scheduler = make_scheduler(h, sampler, base_config)
        refiner.scheduler = make_scheduler(h, sampler, base_config)
        common = dict(prompt=PROMPT, negative_prompt=NEGATIVE, num_inference_steps=ENSEMBLE_STEPS,
                      guidance_scale=ENSEMBLE_GUIDANCE)
        latents, _, base_t, _ = run(first, ENSEMBLE_SEED, denoising_end=fraction, output_type="latent", **start,
                                    **common)
        image, _, refiner_t, ids = run(refiner, ENSEMBLE_SEED, image=latents, denoising_start=fraction,
                                       output_type="np", **common)
        pos, neg = time_ids_of(ids)
        # what the refiner changes: the base's own image of all the steps, beside the ensemble's
        alone, _, _, _ = run(first, ENSEMBLE_SEED, output_type="np", **start, **common)
        moved = float((image - alone).abs().mean()) * 255
        order = first.scheduler.order
        if order == 1 and strength is None and (len(base_t) + len(refiner_t) != ENSEMBLE_STEPS or
                                                base_t[-1] <= refiner_t[0]):
            raise AssertionError(f"ensemble {rid}: the parts do not split the schedule: {base_t} / {refiner_t}")
        t[f"ensemble.{rid}.base_latents"] = latents
        t[f"ensemble.{rid}.image"] = image
        t[f"ensemble.{rid}.add_time_ids"] = pos
        t[f"ensemble.{rid}.add_neg_time_ids"] = neg
        ens.append({"id": rid, "sampler": sampler, "switch": fraction, "scheduler_order": order, "strength": strength,
                    "base_timesteps": base_t,
                    "refiner_timesteps": refiner_t, "base_alone_difference_x255": moved})
        log(h, f"ensemble {rid}: base {base_t}, refiner {refiner_t}, image mean {float(image.mean()):.4f}, "
               f"{moved:.2f}/255 from the base's image of all {ENSEMBLE_STEPS} steps")
    fx = out / "fixtures"
    h.write_tensors(fx / "refiner_sdxl.safetensors", t)
    h.write_json(fx / "refiner_sdxl.json", {
        "model": f"tests/data/{FOLDER}", "base_model": f"tests/data/{sdxl_fixtures.FOLDER}",
        "pipeline": "diffusers StableDiffusionXLImg2ImgPipeline (requires_aesthetics_score True), fp32, CPU; the "
                    "ensemble's base: StableDiffusionXLPipeline",
        "about": __doc__,
        "img2img_args": {"prompt": PROMPT, "negative_prompt": NEGATIVE, "num_inference_steps": STEPS,
                         "guidance_scale": GUIDANCE, "seed": IMG2IMG_SEED, "width": WIDTH, "height": HEIGHT,
                         "init_image": f"fixtures/{INPUT_FILES['init']}", "output_type": "np",
                         "aesthetic_score": 6.0, "negative_aesthetic_score": 2.5},
        "ensemble_args": {"prompt": PROMPT, "negative_prompt": NEGATIVE, "num_inference_steps": ENSEMBLE_STEPS,
                          "guidance_scale": ENSEMBLE_GUIDANCE, "seed": ENSEMBLE_SEED, "width": WIDTH,
                          "height": HEIGHT},
        "layouts": {"init_rgb": "[16,24,3] the init PNG's pixels (uint8, stored as int64)",
                    "*.image": "[1,16,24,3] NHWC float in [0,1] (output_type 'np')",
                    "*.add_time_ids": "[5] original (h, w), crop (top, left), aesthetic score",
                    "*.add_neg_time_ids": "[5] negative original (h, w), negative crop, negative aesthetic score",
                    "ensemble.*.base_latents": "[1,4,8,12] the base's latents at the switch (output_type latent)"},
        "img2img_runs": runs, "ensemble_runs": ens, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})


# The refiner's single file: its one OpenCLIP encoder is embedder 0.
REFINER_OPENCLIP_PREFIX = "conditioner.embedders.0.model."
LDM_EXTRAS = {
    "alphas_cumprod": ("F32", [1000], 0.5),
    REFINER_OPENCLIP_PREFIX + "logit_scale": ("F16", [], 4.60546875),
}


def as_refiner_key(key):
    if key.startswith(ldm_names.SDXL_OPENCLIP_PREFIX):
        return REFINER_OPENCLIP_PREFIX + key[len(ldm_names.SDXL_OPENCLIP_PREFIX):]
    if key.startswith(ldm_names.SDXL_CLIP_PREFIX):
        raise KeyError(f"the refiner has no CLIP encoder, yet '{key}' was made")
    return key


def write_ldm(out, h, folder):
    from diffusers import StableDiffusionXLImg2ImgPipeline
    from safetensors.torch import save_file
    comps = {
        "unet": h.load_safetensors(folder / "unet" / "diffusion_pytorch_model.safetensors"),
        "vae": h.load_safetensors(folder / "vae" / "diffusion_pytorch_model.safetensors"),
        "text_encoder_2": h.load_safetensors(folder / "text_encoder_2" / "model.safetensors"),
    }
    comps["text_encoder_2"] = {n: v for n, v in comps["text_encoder_2"].items() if not n.endswith("position_ids")}
    unet_cfg = json.loads((folder / "unet" / "config.json").read_text())
    vae_cfg = json.loads((folder / "vae" / "config.json").read_text())
    extras = {k: (torch.full(shape, value, dtype={"F32": torch.float32, "F16": torch.float16}[dtype]))
              for k, (dtype, shape, value) in LDM_EXTRAS.items()}
    made = ldm_names.to_ldm_sdxl(comps["unet"], unet_cfg, comps["vae"], vae_cfg, {}, comps["text_encoder_2"])
    ldm = dict({as_refiner_key(k): v for k, v in made.items()}, **extras)
    path = out / f"{FOLDER}-ldm.safetensors"
    save_file(ldm, str(path), metadata={"format": "pt"})
    log(h, f"wrote {path} ({len(ldm)} tensors, {path.stat().st_size} bytes)")

    entries = ldm_names.sdxl_ldm_map(comps["unet"], unet_cfg, comps["vae"], vae_cfg, {}, comps["text_encoder_2"])
    for e in entries:
        e["key"] = as_refiner_key(e["key"])
    ldm_names.check_ldm_map(entries, comps, extras, ldm)
    h.write_json(out / "fixtures" / "ldm_map_sdxl_refiner.json", {
        "about": ("tiny-sdxl-refiner as one SDXL refiner single-file checkpoint (conditioner.embedders.0.model.* "
                  "OpenCLIP names): every tensor of tiny-sdxl-refiner-ldm.safetensors as made from the folder's "
                  "files (sdxl_refiner_fixtures.write_ldm checks the map reproduces the file that diffusers' "
                  "StableDiffusionXLImg2ImgPipeline.from_single_file loads back to the folder's weights). ops as "
                  "in ldm_map_sdxl.json."),
        "folder": f"tests/data/{FOLDER}",
        "components": {"unet": "unet/diffusion_pytorch_model.safetensors",
                       "vae": "vae/diffusion_pytorch_model.safetensors",
                       "text_encoder_2": "text_encoder_2/model.safetensors"},
        "extras": {k: {"dtype": d, "shape": sh, "value": v} for k, (d, sh, v) in LDM_EXTRAS.items()},
        "tensors": entries})

    single = StableDiffusionXLImg2ImgPipeline.from_single_file(str(path), config=str(folder), local_files_only=True,
                                                               torch_dtype=torch.float16, add_watermarker=False)
    folder_pipe = StableDiffusionXLImg2ImgPipeline.from_pretrained(str(folder), torch_dtype=torch.float16,
                                                                   local_files_only=True, add_watermarker=False)
    for name in ("text_encoder_2", "unet", "vae"):
        sdxl_fixtures.assert_same(getattr(folder_pipe, name), getattr(single, name), f"from_single_file {name}")
    log(h, "diffusers' from_single_file gives back the folder's weights (text_encoder_2, unet, vae)")
