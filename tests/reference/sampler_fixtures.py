"""The samplers of issue 21 against diffusers (sections 'samplers' and 'samplerpipes' of make_fixtures.py).

samplers: each new scheduler x (prediction type, timestep spacing) x steps driven by the fake model of the
  'schedulers' section: fixtures/samplers.{json,safetensors}. One run per scheduler.step() call (a UNet evaluation):
  timesteps (one per evaluation, as scheduler.timesteps lists them), sigmas (as the scheduler keeps them),
  init_noise_sigma, and the latents after every step() call. DPMSolverSDEScheduler needs torchsde (and its
  dependency trampoline) installed, even though its noise sampler is replaced.
samplerpipes: StableDiffusionPipeline on tests/data/tiny-sd1 with each new sampler (PIPELINE_ARGS of
  make_fixtures.py: 16x16, 4 steps, guidance 7.5, seed 1234): fixtures/samplerpipes_sd1.{json,safetensors}.

Noise: every scheduler that draws noise takes the loop's generator (step(generator=g)), except
DPMSolverSDEScheduler, whose Brownian-tree noise sampler (torchsde) is replaced by draws from that generator:
torch.randn(shape, generator=g), one per step() call that moves to a sigma above 0 (what sdgen does; see
docs/samplers.md).
"""
import math

import torch

# name -> (class, from_config overrides); sdgen's sampler names (+ _karras / _exp for the sigma variants).
SAMPLERS = {
    "heun": ("HeunDiscreteScheduler", {}),
    "heun_karras": ("HeunDiscreteScheduler", {"use_karras_sigmas": True}),
    "dpm2": ("KDPM2DiscreteScheduler", {}),
    "dpm2_karras": ("KDPM2DiscreteScheduler", {"use_karras_sigmas": True}),
    "dpm2_a": ("KDPM2AncestralDiscreteScheduler", {}),
    "dpm2_a_karras": ("KDPM2AncestralDiscreteScheduler", {"use_karras_sigmas": True}),
    "dpmpp_2s_a": ("DPMSolverSinglestepScheduler", {"algorithm_type": "sde-dpmsolver++", "solver_order": 2}),
    "dpmpp_2s_a_karras": ("DPMSolverSinglestepScheduler",
                          {"algorithm_type": "sde-dpmsolver++", "solver_order": 2, "use_karras_sigmas": True}),
    "dpmpp_sde": ("DPMSolverSDEScheduler", {}),
    "dpmpp_sde_karras": ("DPMSolverSDEScheduler", {"use_karras_sigmas": True}),
    "dpmpp_2m_sde": ("DPMSolverMultistepScheduler", {"algorithm_type": "sde-dpmsolver++", "solver_order": 2}),
    "dpmpp_2m_sde_karras": ("DPMSolverMultistepScheduler",
                            {"algorithm_type": "sde-dpmsolver++", "solver_order": 2, "use_karras_sigmas": True}),
    "lms": ("LMSDiscreteScheduler", {}),
    "lms_karras": ("LMSDiscreteScheduler", {"use_karras_sigmas": True}),
    "unipc": ("UniPCMultistepScheduler", {}),
    "unipc_karras": ("UniPCMultistepScheduler", {"use_karras_sigmas": True}),
    "lcm": ("LCMScheduler", {}),
    "euler_exp": ("EulerDiscreteScheduler", {"use_exponential_sigmas": True}),
    "heun_exp": ("HeunDiscreteScheduler", {"use_exponential_sigmas": True}),
    "lms_exp": ("LMSDiscreteScheduler", {"use_exponential_sigmas": True}),
}
MODES = {
    "eps_leading": {"prediction_type": "epsilon", "timestep_spacing": "leading"},
    "eps_linspace": {"prediction_type": "epsilon", "timestep_spacing": "linspace"},
    "v_trailing": {"prediction_type": "v_prediction", "timestep_spacing": "trailing"},
}
STEPS = (1, 4, 7)
PIPELINE_SAMPLERS = ["heun", "dpm2", "dpm2_a", "dpmpp_2s_a", "dpmpp_sde", "dpmpp_2m_sde", "lms", "unipc", "lcm",
                     "dpmpp_2m_sde_karras", "heun_exp"]


def make_sampler(name, base_config):
    import diffusers
    cls_name, overrides = SAMPLERS[name]
    return getattr(diffusers, cls_name).from_config(dict(base_config), **overrides)


def takes_generator(sched):
    import inspect
    return "generator" in inspect.signature(sched.step).parameters


def patch_brownian_noise(sched, g):
    """DPMSolverSDEScheduler: its noise sampler draws torch.randn from g instead of the Brownian tree."""
    if type(sched).__name__ != "DPMSolverSDEScheduler":
        return
    original_step = sched.step

    def step(model_output, timestep, sample, *args, **kwargs):
        sched.noise_sampler = lambda sigma, sigma_next: torch.randn(sample.shape, generator=g, dtype=sample.dtype)
        return original_step(model_output, timestep, sample, *args, **kwargs)

    sched.step = step


def sigmas_list(sched):
    s = getattr(sched, "sigmas", None)
    return None if not isinstance(s, torch.Tensor) else [float(v) for v in s.tolist()]


@torch.no_grad()
def make_sampler_schedulers(out, h):
    import tiny_models
    tensors, runs = {}, []
    for name in SAMPLERS:
        for mode, mode_cfg in MODES.items():
            for steps in STEPS:
                rid = f"{name}.{mode}.s{steps}"
                base = dict(tiny_models.SCHEDULER_SD15, **mode_cfg)
                # No run may fail (a missing torchsde made DPMSolverSDEScheduler fail once): the section fails.
                sched = make_sampler(name, base)
                sched.set_timesteps(steps)
                timesteps = sched.timesteps.detach().clone()
                sigmas = sigmas_list(sched)
                init_sigma = float(sched.init_noise_sigma)
                g = torch.Generator().manual_seed(11)
                patch_brownian_noise(sched, g)
                x = torch.randn((1, 4, 4, 4), generator=g) * sched.init_noise_sigma
                x_init = x.clone()
                kwargs = {"generator": g} if takes_generator(sched) else {}
                x_steps = []
                for t in timesteps:
                    xin = sched.scale_model_input(x, t)
                    model_out = 0.3 * xin + 0.05 * math.cos(float(t) / 100.0)
                    x = sched.step(model_out, t, x, **kwargs).prev_sample
                    x_steps.append(x.clone())
                tensors[f"{rid}.x_init"] = x_init
                tensors[f"{rid}.x_steps"] = torch.stack(x_steps)
                runs.append({
                    "id": rid, "sampler": name, "class": type(sched).__name__, "mode": mode, "steps": steps,
                    "overrides": dict(SAMPLERS[name][1], **mode_cfg), "config": dict(sched.config),
                    "init_noise_sigma": init_sigma, "timesteps": [float(v) for v in timesteps.tolist()],
                    "sigmas": sigmas, "tensors": {"x_init": f"{rid}.x_init", "x_steps": f"{rid}.x_steps"},
                })
                h.log(f"sampler {rid}: {len(timesteps)} evaluations, timesteps "
                      f"{[round(float(v), 3) for v in timesteps.tolist()]}, |x| max {float(x.abs().max()):.4f}")
    h.write_tensors(out / "fixtures" / "samplers.safetensors", tensors)
    h.write_json(out / "fixtures" / "samplers.json", {
        "about": "issue 21 samplers driven by the fake model; tests/reference/sampler_fixtures.py",
        "loop": ("g = torch.Generator().manual_seed(11); x = torch.randn([1,4,4,4], generator=g) * "
                 "init_noise_sigma; for t in timesteps: xin = scale_model_input(x, t); "
                 "out = 0.3*xin + 0.05*cos(float(t)/100); x = step(out, t, x[, generator=g]).prev_sample"),
        "layouts": {"x_init": "[1,4,4,4]", "x_steps": "[evaluations,1,4,4,4] x after each step() call"},
        "versions": h.versions(), "runs": runs, "tensor_shapes": h.tensor_index(tensors)})


@torch.no_grad()
def make_sampler_pipelines(out, h):
    from real_checkpoints import base_folder
    import tiny_models
    spec = tiny_models.TINY["sd1"]
    pipe = h.load_pipeline(base_folder(out, spec["folder"]))
    base_config = dict(pipe.scheduler.config)
    a = h.PIPELINE_ARGS
    t, runs = {}, []
    for name in PIPELINE_SAMPLERS:
        sched = make_sampler(name, base_config)
        pipe.scheduler = sched
        g = torch.Generator("cpu").manual_seed(a["seed"])
        patch_brownian_noise(sched, g)
        result = pipe(a["prompt"], negative_prompt=a["negative_prompt"], num_inference_steps=a["num_inference_steps"],
                      guidance_scale=a["guidance_scale"], height=a["height"], width=a["width"], generator=g,
                      output_type=a["output_type"])
        image = torch.from_numpy(result.images.copy())
        t[f"{name}.image"] = image
        runs.append({"sampler": name, "class": type(sched).__name__, "overrides": SAMPLERS[name][1],
                     "config": dict(sched.config), "timesteps": [float(v) for v in sched.timesteps.tolist()],
                     "sigmas": sigmas_list(sched), "init_noise_sigma": float(sched.init_noise_sigma),
                     "image": f"{name}.image"})
        h.log(f"samplerpipe {name}: timesteps {runs[-1]['timesteps']}, image mean {float(image.mean()):.4f}")
    h.write_tensors(out / "fixtures" / "samplerpipes_sd1.safetensors", t)
    h.write_json(out / "fixtures" / "samplerpipes_sd1.json", {
        "model": f"tests/data/{spec['folder']}",
        "pipeline": "diffusers StableDiffusionPipeline, fp32, CPU; Class.from_config(pipe.scheduler.config, **overrides)",
        "args": a, "layouts": {"S.image": "[1,16,16,3] NHWC float in [0,1]"},
        "runs": runs, "versions": h.versions(), "tensor_shapes": h.tensor_index(t)})
