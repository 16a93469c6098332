#!/usr/bin/env python3
"""fp16 drift of a whole image against the right yardstick (issue 15 item 3; GPU machine).

  python3 tests/reference/fp16_drift.py MODEL_DIR SDGEN OUT_DIR [--seeds 1 2] [--steps 20] [--sampler euler]

For each seed, in one call: diffusers' StableDiffusionPipeline on MODEL_DIR (a diffusers folder, e.g. the SD 1.5
architecture with random weights of make_sd15_random.py) in fp32 (TF32 off) and in fp16, and sdgen (the binary
SDGEN) in fp32 and fp16 with the same prompt, seed (torch CPU generator, as sdgen reproduces it), size, steps,
sampler (`<Scheduler>.from_config(pipe.scheduler.config)`, as a diffusers user switches samplers) and CFG. The
images are compared as 8-bit pixels (diffusers' output_type="np" rounded as its PIL conversion does; sdgen's PNG):
MAE in /255 units of each against diffusers fp32, so sdgen's fp16 drift is read next to diffusers' own fp16 drift.
Writes OUT_DIR/fp16_drift.json and the PNGs. Needs torch, diffusers, transformers, numpy, Pillow.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import time

import numpy as np
import torch

SCHEDULERS = {"euler": "EulerDiscreteScheduler", "euler_a": "EulerAncestralDiscreteScheduler",
              "dpmpp_2m": "DPMSolverMultistepScheduler", "ddim": "DDIMScheduler"}


def diffusers_image(pipe, prompt, seed, size, steps, cfg):
    gen = torch.Generator("cpu").manual_seed(seed)
    out = pipe(prompt, height=size, width=size, num_inference_steps=steps, guidance_scale=cfg, generator=gen,
               output_type="np")
    # numpy_to_pil: (images * 255).round().astype("uint8")
    return (out.images[0] * 255).round().astype(np.uint8)


def sdgen_image(binary, model, prompt, seed, size, steps, cfg, sampler, precision, path):
    cmd = [binary, "-m", str(model), "-p", prompt, "-s", str(seed), "-W", str(size), "-H", str(size), "--steps",
           str(steps), "--cfg-scale", str(cfg), "--sampler", sampler, "--precision", precision, "-o", str(path)]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"sdgen failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    from PIL import Image
    return np.asarray(Image.open(path).convert("RGB")), time.time() - t0


def mae(a, b):
    return float(np.abs(a.astype(np.int32) - b.astype(np.int32)).mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir", type=pathlib.Path)
    ap.add_argument("sdgen")
    ap.add_argument("out_dir", type=pathlib.Path)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--cfg", type=float, default=7.0)
    ap.add_argument("--sampler", choices=sorted(SCHEDULERS), default="euler")
    ap.add_argument("--prompt", default="a lighthouse on a cliff at dusk, oil painting")
    a = ap.parse_args()
    import diffusers
    from PIL import Image
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    a.out_dir.mkdir(parents=True, exist_ok=True)
    pipes = {}
    for name, dtype in (("fp32", torch.float32), ("fp16", torch.float16)):
        pipe = diffusers.StableDiffusionPipeline.from_pretrained(str(a.model_dir), torch_dtype=dtype,
                                                                 safety_checker=None, requires_safety_checker=False)
        pipe.scheduler = getattr(diffusers, SCHEDULERS[a.sampler]).from_config(pipe.scheduler.config)
        pipe.set_progress_bar_config(disable=True)
        pipes[name] = pipe.to("cuda")
    rows = []
    for seed in a.seeds:
        ref = diffusers_image(pipes["fp32"], a.prompt, seed, a.size, a.steps, a.cfg)
        d16 = diffusers_image(pipes["fp16"], a.prompt, seed, a.size, a.steps, a.cfg)
        Image.fromarray(ref).save(a.out_dir / f"diffusers_fp32_s{seed}.png")
        Image.fromarray(d16).save(a.out_dir / f"diffusers_fp16_s{seed}.png")
        s32, t32 = sdgen_image(a.sdgen, a.model_dir, a.prompt, seed, a.size, a.steps, a.cfg, a.sampler, "fp32",
                               a.out_dir / f"sdgen_fp32_s{seed}.png")
        s16, t16 = sdgen_image(a.sdgen, a.model_dir, a.prompt, seed, a.size, a.steps, a.cfg, a.sampler, "fp16",
                               a.out_dir / f"sdgen_fp16_s{seed}.png")
        row = {"seed": seed, "mae_sdgen_fp32_vs_diffusers_fp32": mae(s32, ref),
               "mae_diffusers_fp16_vs_diffusers_fp32": mae(d16, ref),
               "mae_sdgen_fp16_vs_diffusers_fp32": mae(s16, ref), "mae_sdgen_fp16_vs_diffusers_fp16": mae(s16, d16),
               "mae_sdgen_fp16_vs_sdgen_fp32": mae(s16, s32), "sdgen_fp32_wall_s": t32, "sdgen_fp16_wall_s": t16}
        row["drift_ratio"] = row["mae_sdgen_fp16_vs_diffusers_fp32"] / max(row["mae_diffusers_fp16_vs_diffusers_fp32"],
                                                                           1e-9)
        print(json.dumps(row), flush=True)
        rows.append(row)
    result = {"model": str(a.model_dir), "prompt": a.prompt, "size": a.size, "steps": a.steps, "cfg": a.cfg,
              "sampler": a.sampler, "scheduler": SCHEDULERS[a.sampler], "device": torch.cuda.get_device_name(),
              "torch": torch.__version__, "diffusers": diffusers.__version__, "rows": rows,
              "max_drift_ratio": max(r["drift_ratio"] for r in rows)}
    (a.out_dir / "fp16_drift.json").write_text(json.dumps(result, indent=1) + "\n")
    print("max drift ratio (sdgen fp16 / diffusers fp16, both vs diffusers fp32):", result["max_drift_ratio"])


if __name__ == "__main__":
    main()
