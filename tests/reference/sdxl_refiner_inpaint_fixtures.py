"""Section `sdxlrefinerinpaint` of make_fixtures.py (issue 22): the SDXL refiner after inpainting, as diffusers
0.42.1 runs it (its docs' "Refine the image quality" for inpainting): tests/data/tiny-sdxl as
StableDiffusionXLInpaintPipeline (requires_aesthetics_score False) with denoising_end=F and output_type "latent",
then tests/data/tiny-sdxl-refiner loaded as StableDiffusionXLInpaintPipeline (the refiner folder's
requires_aesthetics_score true, text_encoder None) with image = the base's latents, the same mask_image and
denoising_start=F; each call with a fresh torch.Generator("cpu").manual_seed(seed), both with height and width
(the refiner's default size would be the UNet's sample_size, and the mask resized to it).

What diffusers does (pipeline_stable_diffusion_xl_inpaint.py), and the script checks where it can:
  base     the SD inpainting draws (encode(init).sample, noise, encode(masked image).sample, then ancestral step
           noise) and timesteps of strength (get_timesteps, set_begin_index), cut at denoising_end to those >=
           int(round(T - F T)); after every step the 4-channel blend latents = (1 - mask) * add_noise(image
           latents, noise, timesteps[i + 1]) + mask * latents, and after the last step of the CUT list the image
           latents unnoised: the base's latents at the switch hold the clean image latents outside the mask
           (checked exactly)
  refiner  get_timesteps with denoising_start (strength ignored: the timesteps below the cutoff); image has 4
           channels, so VaeImageProcessor returns it as it is, it is image_latents (no encode, no masked image:
           masked_image_latents None), and prepare_latents with add_noise False draws the noise first
           (randn([1,4,h,w]), checked) and starts from latents = image_latents; the mask is binarized and
           nearest-downsampled as for the base; after every step the same blend, from the base's latents and this
           noise (add_noise of already noised latents), the last one unnoised; aesthetic-score time ids
           (original size + crop + aesthetic score, the negative with 2.5)

fixtures/refiner_inpaint_sdxl.{json,safetensors}: per RUNS id (sampler, strength, switch) the base's latents at the
switch, the refiner's noise, its add_time_ids / add_neg_time_ids, both parts' timesteps and the image; and how far
the image is from the refiner run without the mask (StableDiffusionXLImg2ImgPipeline on the same latents), that
image too: the script fails unless the mask moves it by more than 0.3/255 (0.7/255 for Euler at 0.8, where the
refiner runs 2 of 10 steps; 1.2-22.8/255 for the others), and the C++ tests require sdgen's image to be 4 times closer to the masked
than to the unmasked one, so an sdgen that ignored the mask in the refiner would fail.
"""
import torch

import sdxl_fixtures
import sdxl_refiner_fixtures as refiner_fx
from image_to_image import Capture, INPUT_FILES, assert_close, write_inputs
from real_checkpoints import base_folder

PROMPT, NEGATIVE = refiner_fx.PROMPT, refiner_fx.NEGATIVE
HEIGHT, WIDTH = 16, 24
STEPS, GUIDANCE = 10, 5.0
SEED = 2026
MASK = "grey"
# id -> (sampler, strength, switch); 0.9999 is StableDiffusionXLInpaintPipeline's default strength (int(10 *
# 0.9999) = 9: the first step skipped)
RUNS = {
    "euler.s100.f080": ("euler", 1.0, 0.8),
    "ddim.s075.f080": ("ddim", 0.75, 0.8),
    "euler_a.s100.f050": ("euler_a", 1.0, 0.5),
    "dpmpp_2m.s080.f050": ("dpmpp_2m", 0.8, 0.5),
    "euler.s09999.f070": ("euler", 0.9999, 0.7),
    # order 2 (one timestep per UNet evaluation): the base stops after a step's first evaluation, its blend there
    # unnoised; the refiner starts that step again (sdxl_refiner_fixtures' "+1")
    "heun.s100.f080": ("heun", 1.0, 0.8),
    "dpm2_a.s075.f050": ("dpm2_a", 0.75, 0.5),
}


def log(h, msg):
    h.log(f"sdxlrefinerinpaint: {msg}")


def load_inpaint_refiner(folder):
    from diffusers import StableDiffusionXLInpaintPipeline
    pipe = StableDiffusionXLInpaintPipeline.from_pretrained(str(folder), torch_dtype=torch.float32,
                                                            local_files_only=True, add_watermarker=False)
    pipe.set_progress_bar_config(disable=True)
    if not pipe.config.requires_aesthetics_score or pipe.text_encoder is not None or pipe.unet.config.in_channels != 4:
        raise AssertionError(f"{folder} does not load as an inpainting refiner: {dict(pipe.config)}")
    return pipe


@torch.no_grad()
def make_refiner_inpaint_fixtures(out, h, unet=None, runs_wanted=None, name="refiner_inpaint_sdxl", base_model=None):
    """unet: a 9-channel UNet for the base (sdxl_inpaint9_fixtures: its runs, fixture name and base model)."""
    from diffusers import StableDiffusionXLInpaintPipeline
    base_sdxl = sdxl_fixtures.load_pipeline(base_folder(out, sdxl_fixtures.FOLDER))
    base = StableDiffusionXLInpaintPipeline(**dict(base_sdxl.components, **({"unet": unet} if unet else {})),
                                            requires_aesthetics_score=False)
    nine = base.unet.config.in_channels == 9
    base.set_progress_bar_config(disable=True)
    refiner_dir = base_folder(out, refiner_fx.FOLDER)
    refiner = load_inpaint_refiner(refiner_dir)
    refiner_i2i = refiner_fx.load_refiner(refiner_dir)
    base_config = dict(base.scheduler.config)
    pil, raw = write_inputs(out, h)
    mask_pil = pil[MASK]
    vsf = base.vae_scale_factor
    mask_condition = base.mask_processor.preprocess(mask_pil, height=HEIGHT, width=WIDTH)
    mask_latent = torch.nn.functional.interpolate(mask_condition, size=(HEIGHT // vsf, WIDTH // vsf))
    kept = (mask_latent < 0.5).expand(1, 4, HEIGHT // vsf, WIDTH // vsf)
    t = {"init_rgb": raw["init_rgb"], "mask_as_l": raw["mask_grey"], "mask_latent": mask_latent}
    runs = []
    for rid, (sampler, strength, switch) in (runs_wanted or RUNS).items():
        base.scheduler = refiner_fx.make_scheduler(h, sampler, base_config)
        refiner.scheduler = refiner_fx.make_scheduler(h, sampler, base_config)
        refiner_i2i.scheduler = refiner_fx.make_scheduler(h, sampler, base_config)
        common = dict(prompt=PROMPT, negative_prompt=NEGATIVE, num_inference_steps=STEPS, guidance_scale=GUIDANCE,
                      height=HEIGHT, width=WIDTH)
        base_prep = Capture(base, "prepare_latents")
        latents, _, base_t, _ = refiner_fx.run(base, SEED, image=pil["init"], mask_image=mask_pil, strength=strength,
                                               denoising_end=switch, output_type="latent", **common)
        image_latents = None if nine else base_prep.value[2]  # the 9-channel base does not blend
        if image_latents is not None and not torch.equal(latents[kept], image_latents[kept]):
            raise AssertionError(f"{rid}: the base's latents at the switch do not hold the clean image latents "
                                 "outside the mask")
        prep = Capture(refiner, "prepare_latents")
        image, _, refiner_t, ids = refiner_fx.run(refiner, SEED, image=latents, mask_image=mask_pil,
                                                  denoising_start=switch, output_type="np", **common)
        noise = torch.randn(latents.shape, generator=torch.Generator("cpu").manual_seed(SEED))
        got_latents, got_noise, got_image_latents = prep.value
        assert_close(got_noise, noise, f"{rid}: the refiner's noise (its generator's first draw)", tol=0)
        assert_close(got_image_latents, latents, f"{rid}: the refiner's image latents (the base's latents)", tol=0)
        assert_close(got_latents, latents, f"{rid}: the refiner's starting latents", tol=0)
        pos, neg = refiner_fx.time_ids_of(ids)
        unmasked, _, _, _ = refiner_fx.run(refiner_i2i, SEED, image=latents, denoising_start=switch,
                                           output_type="np", **{k: v for k, v in common.items()
                                                                if k not in ("height", "width")})
        moved = float((image - unmasked).abs().mean()) * 255
        if moved <= 0.3:
            raise AssertionError(f"{rid}: the mask moves the refiner's image by only {moved:.2f}/255")
        t[f"{rid}.base_latents"] = latents
        t[f"{rid}.refiner_noise"] = noise
        t[f"{rid}.image"] = image
        t[f"{rid}.unmasked_image"] = unmasked
        t[f"{rid}.add_time_ids"] = pos
        t[f"{rid}.add_neg_time_ids"] = neg
        runs.append({"id": rid, "sampler": sampler, "strength": strength, "switch": switch,
                     "scheduler_order": int(base.scheduler.order), "base_timesteps": base_t,
                     "refiner_timesteps": refiner_t, "unmasked_refiner_difference_x255": moved})
        log(h, f"{rid}: base {base_t}, refiner {refiner_t}, image mean {float(image.mean()):.4f}, "
               f"{moved:.2f}/255 from the refiner without the mask")
    fx = out / "fixtures"
    h.write_tensors(fx / f"{name}.safetensors", t)
    h.write_json(fx / f"{name}.json", {
        "model": f"tests/data/{refiner_fx.FOLDER}", "base_model": base_model or f"tests/data/{sdxl_fixtures.FOLDER}",
        "base_unet_in_channels": base.unet.config.in_channels,
        "pipeline": "diffusers StableDiffusionXLInpaintPipeline, fp32, CPU: the base (requires_aesthetics_score "
                    "False) with denoising_end and output_type latent, the refiner (from its folder: "
                    "requires_aesthetics_score True) with denoising_start, image = the base's latents",
        "about": __doc__,
        "args": {"prompt": PROMPT, "negative_prompt": NEGATIVE, "num_inference_steps": STEPS,
                 "guidance_scale": GUIDANCE, "seed": SEED, "width": WIDTH, "height": HEIGHT,
                 "init_image": f"fixtures/{INPUT_FILES['init']}", "mask_image": f"fixtures/{INPUT_FILES[MASK]}",
                 "aesthetic_score": 6.0, "negative_aesthetic_score": 2.5},
        "layouts": {"init_rgb": "[16,24,3] the init PNG's pixels (uint8, stored as int64)",
                    "mask_as_l": "[16,24] the mask PNG's pixels (uint8, stored as int64)",
                    "mask_latent": "[1,1,8,12] the binarized, nearest-downsampled mask (1 = repaint)",
                    "ID.base_latents": "[1,4,8,12] the base's latents at the switch (output_type latent)",
                    "ID.refiner_noise": "[1,4,8,12] the refiner's noise: its generator's first draw",
                    "ID.image": "[1,16,24,3] NHWC float in [0,1] (output_type 'np')",
                    "ID.unmasked_image": "[1,16,24,3] the refiner without the mask (img2img on the same latents)",
                    "ID.add_time_ids": "[5] original (h, w), crop (top, left), aesthetic score",
                    "ID.add_neg_time_ids": "[5] negative original (h, w), negative crop, negative aesthetic score"},
        "runs": runs, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})
