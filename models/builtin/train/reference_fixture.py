"""The engine-parity fixture: diffusers' images (and the intermediate tensors behind them) for a few prompts,
computed on the CPU in fp32 from the saved fp16 folder.

Writes <stem>.safetensors and <stem>.json. Per case k the safetensors file holds
  case{k}.image          float32 [1, H, W, 3]  output_type="np" (in [0, 1])
  case{k}.latents        float32 [1, 4, h, w]  the final latents, before division by the VAE scaling factor
  case{k}.init_noise     float32 [1, 4, h, w]  the first draw of torch.Generator('cpu').manual_seed(seed)
                                               (the pipeline multiplies it by the scheduler's init_noise_sigma)
  case{k}.step_noise     float32 [steps, 1, 4, h, w]  euler_a only: the next `steps` draws, one per step
  case{k}.input_ids      int64   [2, 77]       token ids: negative prompt, prompt
  case{k}.prompt_embeds  float32 [2, 77, D]    text encoder output: negative prompt, prompt
"""
from __future__ import annotations

import json

import diffusers
import diffusers.schedulers.scheduling_euler_ancestral_discrete as euler_ancestral_module
import numpy as np
import torch
import transformers
from safetensors.torch import save_file

import pipeline_eval


def _record_step_noise():
    """Wraps the euler_a scheduler's noise source so the tensors it draws can be compared with ours."""
    recorded = []
    original = euler_ancestral_module.randn_tensor

    def recording(*args, **kwargs):
        tensor = original(*args, **kwargs)
        recorded.append(tensor.detach().clone())
        return tensor

    euler_ancestral_module.randn_tensor = recording
    return recorded, lambda: setattr(euler_ancestral_module, "randn_tensor", original)


def write_fixture(model_dir, stem, cases, model_rel, log=print) -> dict:
    """cases: dicts with prompt, negative_prompt, seed, sampler, steps, cfg. Returns the JSON it wrote."""
    torch.manual_seed(0)
    pipe = pipeline_eval.load_pipeline(model_dir, "cpu")
    vae_scale = pipe.vae_scale_factor
    tensors, entries = {}, []
    for k, case in enumerate(cases):
        pipeline_eval.set_sampler(pipe, case["sampler"])
        height = width = pipe.unet.config.sample_size * vae_scale
        latent_shape = (1, pipe.unet.config.in_channels, height // vae_scale, width // vae_scale)
        args = dict(prompt=case["prompt"], negative_prompt=case["negative_prompt"],
                    num_inference_steps=case["steps"], guidance_scale=case["cfg"])

        recorded, restore = _record_step_noise()
        try:
            with torch.no_grad():
                image = pipe(**args, generator=torch.Generator("cpu").manual_seed(case["seed"]),
                             output_type="np").images
        finally:
            restore()
        # The same generation with the initial noise passed in explicitly must give the same image: proof that
        # the initial latents are the generator's first draw and the step noise its following draws.
        g = torch.Generator("cpu").manual_seed(case["seed"])
        init_noise = torch.randn(latent_shape, generator=g)
        expected_step_noise = [torch.randn(latent_shape, generator=g) for _ in recorded]
        after_init = torch.Generator("cpu").manual_seed(case["seed"])
        torch.randn(latent_shape, generator=after_init)  # the generator as the pipeline leaves it
        with torch.no_grad():
            image_again = pipe(**args, generator=after_init, latents=init_noise.clone(), output_type="np").images
            latents = pipe(**args, generator=torch.Generator("cpu").manual_seed(case["seed"]),
                           output_type="latent").images
            embeds, negative_embeds = pipe.encode_prompt(case["prompt"], "cpu", 1, True, case["negative_prompt"])
        if not np.array_equal(image, image_again):
            raise RuntimeError(f"fixture case {k}: explicit initial noise changed the image")
        if any(not torch.equal(a, b) for a, b in zip(recorded, expected_step_noise)):
            raise RuntimeError(f"fixture case {k}: euler_a step noise is not the generator's next draws")
        if case["sampler"] == "euler_a" and len(recorded) != case["steps"]:
            raise RuntimeError(f"fixture case {k}: expected {case['steps']} noise draws, got {len(recorded)}")

        ids = [pipe.tokenizer(text, padding="max_length", max_length=77, truncation=True,
                              return_tensors="pt").input_ids for text in (case["negative_prompt"], case["prompt"])]
        prefix = f"case{k}."
        tensors[prefix + "image"] = torch.from_numpy(np.ascontiguousarray(image)).float()
        tensors[prefix + "latents"] = latents.float().contiguous()
        tensors[prefix + "init_noise"] = init_noise.contiguous()
        if recorded:
            tensors[prefix + "step_noise"] = torch.stack(recorded).float().contiguous()
        tensors[prefix + "input_ids"] = torch.cat(ids).to(torch.int64).contiguous()
        tensors[prefix + "prompt_embeds"] = torch.cat([negative_embeds, embeds]).float().contiguous()
        entries.append({**case, "width": width, "height": height, "tensor_prefix": prefix,
                        "scheduler_class": type(pipe.scheduler).__name__,
                        "scheduler_config": {k2: v for k2, v in dict(pipe.scheduler.config).items()
                                             if not k2.startswith("_")},
                        "timesteps": [int(t) for t in pipe.scheduler.timesteps]})
        log(f"fixture case {k}: {case['sampler']} {case['steps']} steps cfg {case['cfg']} seed {case['seed']} "
            f"'{case['prompt']}' -> image mean {float(image.mean()):.4f}")

    save_file(tensors, f"{stem}.safetensors", metadata={"model": model_rel})
    meta = {
        "model": model_rel,
        "about": "diffusers StableDiffusionPipeline on the CPU in fp32 (weights loaded from the fp16 folder), "
                 "CPU torch.Generator per case; see models/builtin/train/reference_fixture.py",
        "tolerance_mean_abs": 2.0 / 255.0,
        "versions": {"diffusers": diffusers.__version__, "transformers": transformers.__version__,
                     "torch": torch.__version__},
        "vae_scaling_factor": float(pipe.vae.config.scaling_factor),
        "cases": entries,
    }
    with open(f"{stem}.json", "w") as f:
        json.dump(meta, f, indent=1, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    return meta
