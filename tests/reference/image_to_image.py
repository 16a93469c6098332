"""Sections `img2img` and `inpaint` of make_fixtures.py (issue 20): diffusers 0.42.1's
StableDiffusionImg2ImgPipeline and StableDiffusionInpaintPipeline on the tiny models, fp32 on the CPU.

Inputs (written once, by both sections, into fixtures/): a 24x16 RGB init image `i2i_init.png`, a grayscale
mask `i2i_mask.png` (white = repaint, soft edges, and the pixels (0,0) = 127, (0,1) = 128 on either side of the
0.5 threshold) and an RGB mask `i2i_mask_rgb.png` (the grey mask plus per-channel offsets: PIL's convert("L")
decides which pixels are white). Both PNGs are 8-bit without alpha, written by PIL. The pipelines get them as PIL
images at their own size, with height=16, width=24, so VaeImageProcessor resizes nothing.

img2img (fixtures/img2img_{sd1,sd2}): for each sampler in SAMPLERS and strength in STRENGTHS, 6 steps, seed 1234.
  diffusers' order of draws from the one torch.Generator("cpu"):
    1. vae.encode(init).latent_dist.sample(generator)  randn([1,4,h,w])  -> * scaling_factor = image latents
    2. noise                                           randn([1,4,h,w])
    3. ancestral samplers: one randn([1,4,h,w]) per step, after the UNet call
  t_start = steps - min(int(steps * strength), steps); the loop runs timesteps[t_start:] (set_begin_index
  t_start: the schedulers' step index starts there, so DPM++ 2M's first step is first order) and the initial
  latents are scheduler.add_noise(image latents, noise, timesteps[t_start]): DDIM sqrt(abar) x + sqrt(1-abar) n;
  Euler(a) x + sigma n; DPM++ alpha_t x + sigma_t n (alpha_t = 1/sqrt(sigma^2+1), sigma_t = sigma alpha_t).
  The script checks this order: it redraws 1 and 2 itself and compares with the pipeline's prepared latents.

inpaint (fixtures/inpaint_{sd1,sd2} with the ordinary 4-channel UNets, fixtures/inpaint9_sd1 with a 9-channel
inpainting UNet, tests/data/tiny-sd1-inpaint/unet): StableDiffusionInpaintPipeline, 6 steps, seed 4321.
  mask: convert("L"), /255, binarized (>= 0.5 -> 1), nearest-downsampled to the latent size (F.interpolate);
  masked image = init * (mask < 0.5) (repainted pixels become 0, i.e. grey).
  draws: [1. encode(init).sample (only for a 4-channel UNet or strength < 1)], 2. noise, 3. encode(masked
  image).sample (always, even for 4-channel UNets, which do not use it), then ancestral step noise.
  initial latents: strength 1 -> noise * init_noise_sigma; else add_noise(image latents, noise, t_start).
  9 channels: the UNet input is cat([scale_model_input(latents), mask, masked image latents], channels).
  4 channels (what diffusers' removed StableDiffusionInpaintPipelineLegacy did, now inside this pipeline):
  after each step i, latents = (1 - mask) * add_noise(image latents, noise, timesteps[i + 1]) + mask * latents,
  with the image latents unnoised after the last step.

tests/data/tiny-sd1-inpaint/: model_index.json (StableDiffusionInpaintPipeline), scheduler/ (tiny-sd1's) and
unet/ (9 input channels, tiny-sd1's UNet config otherwise, random weights as tiny_models.py draws them, fp16).
Its text encoder, tokenizer and VAE are tiny-sd1's, not copied (the C++ test links them into a complete folder).
tests/data/tiny-sd1-inpaint-unet-ldm.safetensors: that UNet under LDM names (model.diffusion_model.*); with the
other tensors of tiny-sd1-ldm.safetensors it is an inpainting single-file checkpoint (checked with diffusers'
convert_ldm_unet_checkpoint).
"""
import copy
import json
import pathlib
import shutil

import torch

import ldm_names
import tiny_models
from real_checkpoints import base_folder

WIDTH, HEIGHT = 24, 16
STEPS = 6
GUIDANCE = 7.5
PROMPT, NEGATIVE = "a red circle on a blue background", "blurry"
IMG2IMG_SEED, INPAINT_SEED = 1234, 4321
SAMPLERS = ["ddim", "euler", "euler_a", "dpmpp_2m"]
STRENGTHS = [0.75, 0.5]
# (sampler, strength) per inpainting fixture; the mask each one uses
INPAINT_RUNS = [("ddim", 1.0), ("euler_a", 0.75), ("dpmpp_2m", 0.6)]
INPAINT9_RUNS = [("euler_a", 1.0), ("ddim", 0.75), ("dpmpp_2m", 1.0)]
INPAINT_MASK = {"sd1": "rgb", "sd2": "grey", "sd1_unet9": "grey", "sdxl": "grey", "sdxl_unet9": "grey"}

INPUT_FILES = {"init": "i2i_init.png", "grey": "i2i_mask.png", "rgb": "i2i_mask_rgb.png"}


def strength_tag(s):
    return f"s{int(round(s * 100)):03d}"


# ---------------------------------------------------------------------------------------------------------------
# inputs


def make_inputs():
    """uint8 tensors: init [H,W,3], grey mask [H,W], rgb mask [H,W,3]."""
    y = torch.arange(HEIGHT, dtype=torch.float32)[:, None].expand(HEIGHT, WIDTH)
    x = torch.arange(WIDTH, dtype=torch.float32)[None, :].expand(HEIGHT, WIDTH)
    img = torch.stack([40 + 180 * x / (WIDTH - 1), 30 + 200 * y / (HEIGHT - 1),
                       200 - 150 * (x + y) / (WIDTH + HEIGHT - 2)], dim=-1)
    disc = (x - 15) ** 2 + (y - 7) ** 2 <= 20
    img[disc] = torch.tensor([230.0, 40.0, 30.0])
    g = torch.Generator().manual_seed(4242)
    img = img + torch.randn((HEIGHT, WIDTH, 3), generator=g) * 12
    init = img.round().clamp(0, 255).to(torch.uint8)

    d = ((x - 9.5) ** 2 / 36 + (y - 8.5) ** 2 / 25).sqrt()  # an ellipse with a soft edge
    m = ((1.3 - d) / 0.6 * 255).clamp(0, 255).round()
    m[0, 0], m[0, 1], m[HEIGHT - 1, WIDTH - 1], m[HEIGHT - 1, WIDTH - 2] = 127, 128, 255, 0
    grey = m.to(torch.uint8)

    offsets = torch.randint(-40, 41, (HEIGHT, WIDTH, 3), generator=g).float()
    rgb = (m[..., None] + offsets).clamp(0, 255).round().to(torch.uint8)
    return init, grey, rgb


def write_inputs(out, h):
    import numpy as np
    from PIL import Image
    init, grey, rgb = make_inputs()
    fx = out / "fixtures"
    fx.mkdir(parents=True, exist_ok=True)
    pil = {"init": Image.fromarray(init.numpy()), "grey": Image.fromarray(grey.numpy()),
           "rgb": Image.fromarray(rgb.numpy())}
    for name, image in pil.items():
        path = fx / INPUT_FILES[name]
        image.save(str(path), format="PNG")
        back = Image.open(str(path))
        back.load()
        if back.mode != image.mode or back.size != (WIDTH, HEIGHT) or not np.array_equal(np.array(back),
                                                                                           np.array(image)):
            raise AssertionError(f"{path} does not read back as written")
        h.log(f"wrote {path} ({path.stat().st_size} bytes, mode {image.mode})")
    if pil["init"].mode != "RGB" or pil["grey"].mode != "L" or pil["rgb"].mode != "RGB":
        raise AssertionError(f"unexpected PIL modes {[p.mode for p in pil.values()]}")
    rgb_as_l = torch.from_numpy(np.array(pil["rgb"].convert("L")))
    raw = {"init_rgb": init, "mask_grey": grey, "mask_rgb": rgb, "mask_rgb_as_l": rgb_as_l}
    return pil, raw


# ---------------------------------------------------------------------------------------------------------------
# helpers


class Capture:
    """Wraps a pipeline method to keep what it returned (the pipelines call these through self)."""

    def __init__(self, pipe, name):
        self.value = None
        if name in vars(pipe):  # a previous run's wrapper: back to the class's method
            delattr(pipe, name)
        original = getattr(pipe, name)

        def wrapper(*args, **kwargs):
            self.value = original(*args, **kwargs)
            return self.value

        setattr(pipe, name, wrapper)


def run(pipe, seed, **kwargs):
    seen_latents, seen_t = [], []

    def on_step(p, i, ts, kw):
        seen_latents.append(kw["latents"].detach().clone())
        seen_t.append(float(ts))
        return {}

    result = pipe(PROMPT, negative_prompt=NEGATIVE, num_inference_steps=STEPS, guidance_scale=GUIDANCE,
                  generator=torch.Generator("cpu").manual_seed(seed), output_type="np",
                  callback_on_step_end=on_step, callback_on_step_end_tensor_inputs=["latents"], **kwargs)
    return torch.from_numpy(result.images.copy()), torch.stack(seen_latents), seen_t


def t_start_of(strength):
    return max(STEPS - min(int(STEPS * strength), STEPS), 0)


def add_noise_at_start(h, sampler, base_config, x, noise, t_start):
    """add_noise as the pipelines call it before the first step (after set_begin_index), on a fresh scheduler."""
    sched = h.make_scheduler(sampler, base_config)
    sched.set_timesteps(STEPS)
    if hasattr(sched, "set_begin_index"):
        sched.set_begin_index(t_start * sched.order)
    return sched.add_noise(x, noise, sched.timesteps[t_start * sched.order:][:1])


def scheduler_record(sched, h):
    sigmas = h.sigmas_of(sched)
    return {"class": type(sched).__name__, "config": dict(sched.config),
            "all_timesteps": [float(v) for v in sched.timesteps.tolist()],
            "sigmas": None if sigmas is None else [float(v) for v in sigmas.tolist()],
            "init_noise_sigma": float(sched.init_noise_sigma), "order": int(sched.order)}


def assert_close(a, b, what, tol=1e-6):
    if a.shape != b.shape or not torch.allclose(a, b, rtol=0, atol=tol):
        diff = (a - b).abs().max() if a.shape == b.shape else f"shapes {tuple(a.shape)} vs {tuple(b.shape)}"
        raise AssertionError(f"{what}: differs ({diff})")


def nchw(image_u8):
    """What VaeImageProcessor.preprocess gives for a PIL RGB image at its size: [1,3,H,W] in [-1,1], float32."""
    x = image_u8.to(torch.float32).numpy() / 255.0  # numpy float32, as pil_to_numpy
    t = torch.from_numpy(x).permute(2, 0, 1)[None]
    return 2.0 * t - 1.0


# ---------------------------------------------------------------------------------------------------------------
# img2img


def make_img2img_fixtures(out, h):
    write_inputs(out, h)
    h.for_each_model(lambda key, o: make_img2img_for_model(key, o, h), out)


def make_sdxl_img2img_fixtures(out, h):
    """Section `sdxlimg2img` (issue 22): StableDiffusionXLImg2ImgPipeline and StableDiffusionXLInpaintPipeline on
    tests/data/tiny-sdxl, the same runs, inputs and order of draws as the SD ones (the base model: no aesthetic
    score in add_time_ids; original and target size the image's, crop 0, 0), into fixtures/img2img_sdxl.* and
    fixtures/inpaint_sdxl.* (the grey mask, the ordinary UNet's masked-latent blending)."""
    write_inputs(out, h)
    make_img2img_for_model("sdxl", out, h)
    make_inpaint_case("sdxl", out, h)


def load_base(key, out, h):
    """The tiny model's folder spec and pipeline: tiny-sdxl through sdxl_fixtures, the SD ones as make_fixtures."""
    if key == "sdxl":
        import sdxl_fixtures
        spec = {"folder": sdxl_fixtures.FOLDER}
        return spec, sdxl_fixtures.load_pipeline(base_folder(out, spec["folder"]))
    spec = tiny_models.TINY[key]
    return spec, h.load_pipeline(base_folder(out, spec["folder"]))


@torch.no_grad()
def make_img2img_for_model(key, out, h):
    from diffusers import StableDiffusionImg2ImgPipeline, StableDiffusionXLImg2ImgPipeline
    spec, base = load_base(key, out, h)
    if key == "sdxl":
        pipe = StableDiffusionXLImg2ImgPipeline(**base.components, requires_aesthetics_score=False)
        pipeline_name = "diffusers StableDiffusionXLImg2ImgPipeline, fp32, CPU, requires_aesthetics_score False"
    else:
        pipe = StableDiffusionImg2ImgPipeline(**base.components, requires_safety_checker=False)
        pipeline_name = "diffusers StableDiffusionImg2ImgPipeline, fp32, CPU, safety_checker None"
    pipe.set_progress_bar_config(disable=True)
    base_config = dict(base.scheduler.config)
    pil, raw = write_inputs(out, h)
    init = pipe.image_processor.preprocess(pil["init"])
    assert_close(init, nchw(raw["init_rgb"]), f"{key}: VaeImageProcessor's init image", tol=0)
    sf = pipe.vae.config.scaling_factor

    # the draws 1 and 2 redone by hand: the encoder's sample, then the noise
    g = torch.Generator("cpu").manual_seed(IMG2IMG_SEED)
    image_latents = pipe.vae.encode(init).latent_dist.sample(g) * sf
    noise = torch.randn(image_latents.shape, generator=g)
    t = {"init_image": init, "init_rgb": raw["init_rgb"], "image_latents": image_latents, "noise": noise}
    runs = []
    for sampler in SAMPLERS:
        for strength in STRENGTHS:
            rid = f"{sampler}.{strength_tag(strength)}"
            pipe.scheduler = h.make_scheduler(sampler, base_config)
            cap = Capture(pipe, "prepare_latents")
            image, steps, seen_t = run(pipe, IMG2IMG_SEED, image=pil["init"], strength=strength)
            t_start = t_start_of(strength)
            expected = add_noise_at_start(h, sampler, base_config, image_latents, noise, t_start)
            assert_close(cap.value, expected, f"{key} {rid}: the pipeline's initial latents vs the documented "
                         "draws (encoder sample, then noise) and add_noise")
            if len(seen_t) != STEPS - t_start:
                raise AssertionError(f"{key} {rid}: {len(seen_t)} steps ran, expected {STEPS - t_start}")
            t[f"{rid}.image"] = image
            t[f"{rid}.init_latents"] = cap.value
            t[f"{rid}.latents_steps"] = steps
            rec = scheduler_record(pipe.scheduler, h)
            rec.update({"id": rid, "sampler": sampler, "strength": strength, "t_start": t_start,
                        "timesteps": seen_t,
                        "tensors": {"image": f"{rid}.image", "init_latents": f"{rid}.init_latents",
                                    "latents_steps": f"{rid}.latents_steps"}})
            runs.append(rec)
            h.log(f"{key}: img2img {rid}: t_start {t_start}, timesteps {seen_t}, image mean "
                  f"{float(image.mean()):.4f}, clamped {float(((image <= 0) | (image >= 1)).float().mean()):.3f}")
    h.write_tensors(out / "fixtures" / f"img2img_{key}.safetensors", t)
    h.write_json(out / "fixtures" / f"img2img_{key}.json", {
        "model": f"tests/data/{spec['folder']}",
        "pipeline": pipeline_name,
        "about": __doc__,
        "args": {"prompt": PROMPT, "negative_prompt": NEGATIVE, "num_inference_steps": STEPS,
                 "guidance_scale": GUIDANCE, "seed": IMG2IMG_SEED, "width": WIDTH, "height": HEIGHT,
                 "init_image": f"fixtures/{INPUT_FILES['init']}", "output_type": "np"},
        "generator": ("torch.Generator('cpu').manual_seed(seed): 1. the VAE encoder's latent_dist.sample "
                      "randn([1,4,h,w]), 2. the noise randn([1,4,h,w]), 3. ancestral step noise, one per step"),
        "vae_scaling_factor": sf,
        "layouts": {"init_rgb": "[16,24,3] the PNG's pixels (uint8, stored as int64)",
                    "init_image": "[1,3,16,24] NCHW in [-1,1]: what the pipeline encodes",
                    "image_latents": "[1,4,8,12] latent_dist.sample(generator) * scaling_factor",
                    "noise": "[1,4,8,12] the second draw",
                    "ID.init_latents": "[1,4,8,12] add_noise(image_latents, noise, timesteps[t_start])",
                    "ID.latents_steps": "[steps - t_start,1,4,8,12] latents after each step",
                    "ID.image": "[1,16,24,3] NHWC float in [0,1] (output_type 'np')"},
        "runs": runs, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})


# ---------------------------------------------------------------------------------------------------------------
# inpainting


def inpaint_folder_name(key):
    return tiny_models.INPAINT[key]["folder"]


def write_inpaint_model(out, key, h):
    """The 9-channel UNet as tests/data/tiny-sd1-inpaint/ (see the module docstring); returns it (fp32)."""
    from diffusers import UNet2DConditionModel
    from safetensors.torch import save_file
    spec = tiny_models.TINY[key]
    base = base_folder(out, spec["folder"])
    unet = tiny_models.build_inpaint_unet(key)
    folder = out / inpaint_folder_name(key)
    shutil.rmtree(folder, ignore_errors=True)
    unet.half()
    unet.save_pretrained(str(folder / "unet"), safe_serialization=True)
    unet.float()
    shutil.copytree(base / "scheduler", folder / "scheduler")
    index = json.loads((base / "model_index.json").read_text(encoding="utf-8"))
    index["_class_name"] = "StableDiffusionInpaintPipeline"
    (folder / "model_index.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    reloaded = UNet2DConditionModel.from_pretrained(str(folder / "unet"), torch_dtype=torch.float32)
    h.assert_same_weights(unet, reloaded, "unet")
    if reloaded.config.in_channels != 9:
        raise AssertionError(f"{folder}/unet: in_channels {reloaded.config.in_channels}")
    h.log(f"{key}: wrote {folder}: " + ", ".join(
        f"{p.relative_to(folder)} {p.stat().st_size}" for p in sorted(folder.rglob("*")) if p.is_file()))

    # the same UNet under LDM names, checked with diffusers' converter inside a whole single-file state dict
    unet_sd = h.load_safetensors(folder / "unet" / "diffusion_pytorch_model.safetensors")
    unet_cfg = json.loads((folder / "unet" / "config.json").read_text(encoding="utf-8"))
    L = unet_cfg["layers_per_block"]
    ldm_unet = {ldm_names.UNET_PREFIX + ldm_names.unet_name_to_ldm(k, L, list(unet_cfg["up_block_types"])): v
                for k, v in unet_sd.items()}
    ldm_path = out / f"{inpaint_folder_name(key)}-unet-ldm.safetensors"
    save_file(ldm_unet, str(ldm_path), metadata={"format": "pt"})
    base_ldm = h.load_safetensors(base.parent / f"{spec['folder']}-ldm.safetensors")
    merged = {k: v for k, v in base_ldm.items() if not k.startswith(ldm_names.UNET_PREFIX)}
    merged.update(h.load_safetensors(ldm_path))
    from diffusers.loaders import single_file_utils as sfu
    conv = sfu.convert_ldm_unet_checkpoint(merged, unet_cfg)
    if set(conv) != set(unet_sd) or any(not torch.equal(conv[k].to(unet_sd[k].dtype), unet_sd[k]) for k in unet_sd):
        raise AssertionError(f"{ldm_path}: diffusers' convert_ldm_unet_checkpoint does not give the UNet back")
    h.log(f"{key}: wrote {ldm_path} ({len(ldm_unet)} tensors, {ldm_path.stat().st_size} bytes); diffusers' "
          "converter gives the folder's UNet back")
    return reloaded.eval()


def make_inpaint_fixtures(out, h):
    write_inputs(out, h)
    failed = []
    for case in ("sd1", "sd2", "sd1_unet9"):
        try:
            make_inpaint_case(case, out, h)
        except Exception:
            import sys
            import traceback
            traceback.print_exc()
            sys.stdout.flush()
            h.log(f"inpaint {case}: FAILED")
            failed.append(case)
    if failed:
        raise RuntimeError(f"inpaint failed for {failed}")


@torch.no_grad()
def make_inpaint_case(case, out, h, unet=None, model=None, single_file=None):
    """unet, model, single_file: sdxl_inpaint9_fixtures' 9-channel SDXL UNet and how the json names its files."""
    from diffusers import StableDiffusionInpaintPipeline, StableDiffusionXLInpaintPipeline
    key = case.split("_")[0]
    nine = case.endswith("unet9")
    spec, base = load_base(key, out, h)
    if key == "sdxl":
        pipe = StableDiffusionXLInpaintPipeline(**dict(base.components, **({"unet": unet} if unet else {})),
                                                requires_aesthetics_score=False)
        pipeline_name = "diffusers StableDiffusionXLInpaintPipeline, fp32, CPU, requires_aesthetics_score False"
    else:
        components = dict(base.components)
        if nine:
            components["unet"] = write_inpaint_model(out, key, h)
        pipe = StableDiffusionInpaintPipeline(**components, requires_safety_checker=False)
        pipeline_name = "diffusers StableDiffusionInpaintPipeline, fp32, CPU, safety_checker None"
    pipe.set_progress_bar_config(disable=True)
    base_config = dict(base.scheduler.config)
    pil, raw = write_inputs(out, h)
    mask_name = INPAINT_MASK[case]
    mask_pil = pil[mask_name]
    sf = pipe.vae.config.scaling_factor

    init = pipe.image_processor.preprocess(pil["init"], height=HEIGHT, width=WIDTH).to(torch.float32)
    assert_close(init, nchw(raw["init_rgb"]), f"{case}: VaeImageProcessor's init image", tol=0)
    mask_condition = pipe.mask_processor.preprocess(mask_pil, height=HEIGHT, width=WIDTH)
    grey = raw["mask_grey"] if mask_name == "grey" else raw["mask_rgb_as_l"]
    binary = (grey.to(torch.float32) / 255.0 >= 0.5).to(torch.float32)[None, None]
    assert_close(mask_condition, binary, f"{case}: the binarized mask", tol=0)
    masked = init * (mask_condition < 0.5)
    mask_latent = torch.nn.functional.interpolate(mask_condition, size=(HEIGHT // pipe.vae_scale_factor,
                                                                        WIDTH // pipe.vae_scale_factor))
    t = {"init_rgb": raw["init_rgb"], "mask_png": grey if mask_name == "grey" else raw["mask_rgb"],
         "mask_as_l": grey, "mask_condition": mask_condition, "mask_latent": mask_latent, "masked_image": masked}
    runs = []
    for sampler, strength in (INPAINT9_RUNS if nine else INPAINT_RUNS):
        rid = f"{sampler}.{strength_tag(strength)}"
        pipe.scheduler = h.make_scheduler(sampler, base_config)
        cap_latents = Capture(pipe, "prepare_latents")
        cap_mask = Capture(pipe, "prepare_mask_latents")
        image, steps, seen_t = run(pipe, INPAINT_SEED, image=pil["init"], mask_image=mask_pil, strength=strength,
                                   height=HEIGHT, width=WIDTH)
        t_start = t_start_of(strength)
        # the draws redone by hand, in the documented order
        g = torch.Generator("cpu").manual_seed(INPAINT_SEED)
        encodes_init = not nine or strength < 1.0
        image_latents = pipe.vae.encode(init).latent_dist.sample(g) * sf if encodes_init else None
        noise = torch.randn((1, 4, HEIGHT // pipe.vae_scale_factor, WIDTH // pipe.vae_scale_factor), generator=g)
        masked_latents = pipe.vae.encode(masked).latent_dist.sample(g) * sf
        got = cap_latents.value
        assert_close(got[1], noise, f"{case} {rid}: the noise (draw order)")
        if not nine:
            assert_close(got[2], image_latents, f"{case} {rid}: the image latents (draw order)")
        got_mask, got_masked = cap_mask.value
        assert_close(got_mask[:1], mask_latent, f"{case} {rid}: the latent mask", tol=0)
        assert_close(got_masked[:1], masked_latents, f"{case} {rid}: the masked image latents (draw order)")
        if strength < 1.0:
            expected = add_noise_at_start(h, sampler, base_config, image_latents, noise, t_start)
        else:
            expected = noise * pipe.scheduler.init_noise_sigma
        assert_close(got[0], expected, f"{case} {rid}: the initial latents")
        t[f"{rid}.image"] = image
        t[f"{rid}.init_latents"] = got[0]
        t[f"{rid}.noise"] = noise
        t[f"{rid}.masked_image_latents"] = masked_latents
        if image_latents is not None:
            t[f"{rid}.image_latents"] = image_latents
        t[f"{rid}.latents_steps"] = steps
        rec = scheduler_record(pipe.scheduler, h)
        rec.update({"id": rid, "sampler": sampler, "strength": strength, "t_start": t_start, "timesteps": seen_t,
                    "encodes_init_image": encodes_init})
        runs.append(rec)
        h.log(f"{case}: inpaint {rid}: t_start {t_start}, timesteps {seen_t}, image mean "
              f"{float(image.mean()):.4f}, clamped {float(((image <= 0) | (image >= 1)).float().mean()):.3f}")
    name = f"inpaint9_{key}" if nine else f"inpaint_{key}"
    h.write_tensors(out / "fixtures" / f"{name}.safetensors", t)
    h.write_json(out / "fixtures" / f"{name}.json", {
        "model": model or ((f"tests/data/{inpaint_folder_name(key)} (unet, scheduler) + tests/data/{spec['folder']} "
                            "(text_encoder, tokenizer, vae)") if nine else f"tests/data/{spec['folder']}"),
        "single_file_unet": single_file or (f"tests/data/{inpaint_folder_name(key)}-unet-ldm.safetensors" if nine
                                            else None),
        "unet_in_channels": 9 if nine else 4,
        "pipeline": pipeline_name,
        "about": __doc__,
        "args": {"prompt": PROMPT, "negative_prompt": NEGATIVE, "num_inference_steps": STEPS,
                 "guidance_scale": GUIDANCE, "seed": INPAINT_SEED, "width": WIDTH, "height": HEIGHT,
                 "init_image": f"fixtures/{INPUT_FILES['init']}", "mask_image": f"fixtures/{INPUT_FILES[mask_name]}",
                 "output_type": "np"},
        "generator": ("torch.Generator('cpu').manual_seed(seed): [1. encode(init).latent_dist.sample, only for a "
                      "4-channel UNet or strength < 1], 2. noise, 3. encode(masked image).latent_dist.sample, then "
                      "ancestral step noise"),
        "vae_scaling_factor": sf,
        "layouts": {"init_rgb": "[16,24,3] uint8 (as int64)", "mask_png": "the mask PNG's pixels (uint8 as int64)",
                    "mask_as_l": "[16,24] the mask as PIL's convert('L') gives it",
                    "mask_condition": "[1,1,16,24] binarized mask (1 = repaint)",
                    "mask_latent": "[1,1,8,12] nearest-downsampled mask",
                    "masked_image": "[1,3,16,24] init * (mask < 0.5), in [-1,1]",
                    "ID.noise": "[1,4,8,12]", "ID.image_latents": "[1,4,8,12] (when drawn)",
                    "ID.masked_image_latents": "[1,4,8,12] encode(masked).sample * scaling_factor",
                    "ID.init_latents": "[1,4,8,12] the latents before the first step",
                    "ID.latents_steps": "[steps - t_start,1,4,8,12] after each step (and the blend)",
                    "ID.image": "[1,16,24,3] NHWC float in [0,1]"},
        "runs": runs, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})
