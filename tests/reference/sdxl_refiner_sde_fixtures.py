"""Section `sdxlrefinersde` of make_fixtures.py (issue 22): the base + refiner ensemble (tiny-sdxl, then
tiny-sdxl-refiner; sdxl_refiner_fixtures.py's ensemble, same prompt, seed, size and 10 steps) with the two samplers
that section leaves out, against diffusers 0.42.1 on the CPU:
  dpmpp_sde   DPMSolverSDEScheduler. Its Brownian-tree noise sampler is replaced, as in sampler_fixtures.py, by
              torch.randn draws from the pipeline's own generator (docs/samplers.md: sdgen's noise), so each part
              draws its noise after its starting latents from its fresh torch.Generator("cpu").manual_seed(seed).
              Order 2 (2N - 1 timesteps): the refiner's "+1 when even" puts it at a step's first evaluation.
  dpmpp_2s_a  DPMSolverSinglestepScheduler (sde-dpmsolver++, solver order 2; the class's order is 1, so no "+1"):
              its solver orders are planned over the whole schedule, and the refiner's scheduler, starting
              without the model outputs of the steps before the switch, lowers a second-order first step to
              first order (step(): "while self.model_outputs[-order] is None: order -= 1").
Fixtures: fixtures/refiner_sde_sdxl.{json,safetensors} (float32 pipelines on the CPU, 16x24 pixels): per run the
base's latents at the switch, the timesteps of both parts, and the image (NHWC in [0, 1]).
"""
import torch

from real_checkpoints import base_folder
import sdxl_fixtures
import sdxl_refiner_fixtures as refiner_fixtures
from sampler_fixtures import make_sampler, patch_brownian_noise

STEPS, GUIDANCE, SEED = refiner_fixtures.ENSEMBLE_STEPS, refiner_fixtures.ENSEMBLE_GUIDANCE, refiner_fixtures.ENSEMBLE_SEED
# id -> (sampler, switch fraction)
RUNS = {"dpmpp_sde.f080": ("dpmpp_sde", 0.8), "dpmpp_sde.f050": ("dpmpp_sde", 0.5),
        "dpmpp_sde_karras.f080": ("dpmpp_sde_karras", 0.8),
        # timesteps 999, 899, ..., 100 (linspace): the refiner starts at step 7, a second-order step lowered to first
        # order (0.65: cutoff 350), and at step 6, a first-order one (0.5)
        "dpmpp_2s_a.f065": ("dpmpp_2s_a", 0.65), "dpmpp_2s_a.f050": ("dpmpp_2s_a", 0.5)}


def log(h, msg):
    h.log(f"sdxlrefinersde: {msg}")


def run(pipe, sampler, base_config, **kwargs):
    """One pipeline call with a fresh scheduler and a fresh generator its noise sampler also draws from."""
    pipe.scheduler = make_sampler(sampler, base_config)
    g = torch.Generator("cpu").manual_seed(SEED)
    patch_brownian_noise(pipe.scheduler, g)  # DPMSolverSDEScheduler only: its noise drawn from g
    seen_t = []

    def on_step(p, i, ts, kw):
        seen_t.append(float(ts))
        return {}

    result = pipe(generator=g, callback_on_step_end=on_step, prompt=refiner_fixtures.PROMPT,
                  negative_prompt=refiner_fixtures.NEGATIVE, num_inference_steps=STEPS, guidance_scale=GUIDANCE,
                  **kwargs)
    images = result.images if kwargs.get("output_type") == "latent" else torch.from_numpy(result.images.copy())
    return images, seen_t


def make_refiner_sde_fixtures(out, h):
    refiner = refiner_fixtures.load_refiner(base_folder(out, refiner_fixtures.FOLDER))
    base = sdxl_fixtures.load_pipeline(base_folder(out, sdxl_fixtures.FOLDER))
    base_config = dict(base.scheduler.config)
    size = dict(height=refiner_fixtures.HEIGHT, width=refiner_fixtures.WIDTH)
    t, runs = {}, []
    for rid, (sampler, fraction) in RUNS.items():
        latents, base_t = run(base, sampler, base_config, denoising_end=fraction, output_type="latent", **size)
        image, refiner_t = run(refiner, sampler, base_config, image=latents, denoising_start=fraction,
                               output_type="np")
        t[f"ensemble.{rid}.base_latents"] = latents
        t[f"ensemble.{rid}.image"] = image
        runs.append({"id": rid, "sampler": sampler, "switch": fraction, "scheduler_order": base.scheduler.order,
                     "base_timesteps": base_t, "refiner_timesteps": refiner_t})
        log(h, f"{rid}: base {base_t}, refiner {refiner_t}, image mean {float(image.mean()):.4f}")
    fx = out / "fixtures"
    h.write_tensors(fx / "refiner_sde_sdxl.safetensors", t)
    h.write_json(fx / "refiner_sde_sdxl.json", {
        "model": f"tests/data/{refiner_fixtures.FOLDER}", "base_model": f"tests/data/{sdxl_fixtures.FOLDER}",
        "pipeline": "diffusers StableDiffusionXLPipeline (denoising_end, output_type latent), then "
                    "StableDiffusionXLImg2ImgPipeline (requires_aesthetics_score True, denoising_start), fp32, CPU",
        "about": __doc__,
        "ensemble_args": {"prompt": refiner_fixtures.PROMPT, "negative_prompt": refiner_fixtures.NEGATIVE,
                          "num_inference_steps": STEPS, "guidance_scale": GUIDANCE, "seed": SEED,
                          "width": refiner_fixtures.WIDTH, "height": refiner_fixtures.HEIGHT},
        "layouts": {"*.image": "[1,16,24,3] NHWC float in [0,1] (output_type 'np')",
                    "ensemble.*.base_latents": "[1,4,8,12] the base's latents at the switch (output_type latent)"},
        "ensemble_runs": runs, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})
