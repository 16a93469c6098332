"""Generation through diffusers' StableDiffusionPipeline from the saved folder, and the semantic evaluation.

Noise always comes from CPU torch.Generators seeded per image (diffusers draws the initial latents first, then,
for euler_a, one tensor per step), so an image depends only on prompt, seed and settings, not on the batch it
was generated in or the device the UNet ran on.
"""
from __future__ import annotations

import numpy as np
import torch
from diffusers import (DPMSolverMultistepScheduler, EulerAncestralDiscreteScheduler, EulerDiscreteScheduler,
                       StableDiffusionPipeline)
from PIL import Image

import analysis

SAMPLERS = {
    "euler_a": EulerAncestralDiscreteScheduler,
    "euler": EulerDiscreteScheduler,
    "dpmpp_2m": DPMSolverMultistepScheduler,  # defaults: algorithm_type dpmsolver++, solver_order 2
}


def check_tokenizer(tokenizer, where) -> None:
    """A tokenizer that lost its vocabulary still runs (it maps everything to one id), so check real ids."""
    ids = list(tokenizer("a photo of a cat").input_ids)
    if ids != [49406, 320, 1125, 539, 320, 2368, 49407] or tokenizer.model_max_length != 77:
        raise RuntimeError(f"CLIP tokenizer from {where}: ids {ids}, model_max_length {tokenizer.model_max_length}")


def load_pipeline(model_dir, device) -> StableDiffusionPipeline:
    """The saved fp16 folder, loaded (upcast) as fp32 exactly as a user of diffusers would load it."""
    pipe = StableDiffusionPipeline.from_pretrained(str(model_dir), torch_dtype=torch.float32)
    check_tokenizer(pipe.tokenizer, model_dir)
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)


def set_sampler(pipe: StableDiffusionPipeline, sampler: str) -> None:
    pipe.scheduler = SAMPLERS[sampler].from_config(pipe.scheduler.config)


def generate(pipe, prompts, seeds, sampler, steps, cfg, batch_size=256, negative_prompt="") -> np.ndarray:
    """uint8 images [n, H, W, 3]."""
    set_sampler(pipe, sampler)
    out = []
    for start in range(0, len(prompts), batch_size):
        chunk = prompts[start:start + batch_size]
        gens = [torch.Generator("cpu").manual_seed(int(s)) for s in seeds[start:start + batch_size]]
        with torch.no_grad():
            images = pipe(prompt=chunk, negative_prompt=[negative_prompt] * len(chunk), generator=gens,
                          num_inference_steps=steps, guidance_scale=cfg, output_type="np").images
        out.append(to_uint8(images))
    return np.concatenate(out, axis=0)


def to_uint8(images: np.ndarray) -> np.ndarray:
    """diffusers' float [0, 1] output -> uint8 the way its numpy_to_pil does (x * 255, rounded)."""
    return (np.asarray(images) * 255).round().clip(0, 255).astype(np.uint8)


def evaluate(images: np.ndarray, cases) -> tuple[dict, list[dict]]:
    rows = [analysis.score(case, analysis.analyse(img)) for case, img in zip(cases, images)]
    return analysis.summarize(rows), rows


def image_grid(images: np.ndarray, columns: int, upscale: int = 2, gap: int = 2) -> Image.Image:
    n, h, w, _ = images.shape
    rows = (n + columns - 1) // columns
    H, W = h * upscale, w * upscale
    canvas = Image.new("RGB", (columns * (W + gap) + gap, rows * (H + gap) + gap), (255, 255, 255))
    for i, img in enumerate(images):
        tile = Image.fromarray(img).resize((W, H), Image.NEAREST)
        canvas.paste(tile, (gap + (i % columns) * (W + gap), gap + (i // columns) * (H + gap)))
    return canvas
