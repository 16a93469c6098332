#!/usr/bin/env python3
"""SD 1.5 at 512² end to end on a GPU machine (issue 19): sdgen beside diffusers, in one call.

  python3 bench/e2e.py --work /tmp/e2e --out RESULT.json [--sdgen build/default/app/sdgen]
      [--model-check build/default/tests/model_check/sdgen_model_check] [--images 22] [--runs 20]

Run by scripts/device/e2e.sh. Steps, all in the same call:
  1. tests/reference/make_sd15_random.py builds the SD 1.5 architecture with random weights (fp16 diffusers
     folder) and times diffusers' UNet step (batch 2, fp16, 512²) eager and replayed as a CUDA graph (CUDA
     events, median of its runs after warm-up) into REFS/sd15_random.json;
  2. sdgen_model_check --precision fp16: sdgen's UNet step recorded once and replayed (median, p10, p90 of 30;
     its GPU time from timestamps at the step's start and end, as CUDA events time diffusers' graph replay — the
     wall time of each submit + wait is kept in the details as wall_median_ms),
     as the pipeline records it: the 16 cross-attention K/V projections of the text context are a graph run once
     per image before the steps, whose outputs every step reads (diffusers computes them in every step); their
     time per image is reported beside it (details: context_kv_ms, and the step with 1/20 of it added);
  3. sdgen --profile-conv: launches per UNet step and the step's GPU time (sum of its launches' timestamps);
  4. sdgen -p PROMPT --steps 20 --sampler euler --cfg-scale 7 -W 512 -H 512 --precision fp16 --batch-count
     IMAGES -v: the time of one image after loading is the interval between consecutive "wrote" lines
     (text encode, 20 steps with CFG as batch 2, decode, PNG), the first two images dropped (warm-up),
     median / p10 / p90 of the rest; text encode and decode per image are the medians -v prints (the first
     image's decode records the decode graph: a mean over the images would carry it);
     host time per step = the pipeline's median step (submit to wait, -v) minus the step's GPU time (2): what the
     denoising loop adds per step (sampler arithmetic, noise, CFG combine, the host's submit and wait); within
     the noise of the two medians when it is near zero (the -v median has 0.1 ms resolution);
  5. diffusers in a child process: StableDiffusionPipeline fp16 with EulerDiscreteScheduler, the same prompt,
     20 steps, CFG 7, 512² (`runs` timed after 2 warm-up images, wall clock around each call with a CUDA
     synchronize), the VAE decode of one latent and the text encoder on batch 2 (CUDA events).
RESULT.json holds exactly the issue's fields (device, date, unet_step_ms, diffusers_eager_ms,
diffusers_cudagraph_ms, vae_decode_ms, text_ms, image_20_steps_ms, diffusers_image_ms, launches_per_step,
host_ms_per_step); RESULT-details.json keeps p10/p90 and every raw number.
"""
import argparse
import datetime
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROMPT = "a photo of an astronaut riding a horse on the moon"
FIELDS = ("device", "date", "unet_step_ms", "diffusers_eager_ms", "diffusers_cudagraph_ms", "vae_decode_ms",
          "text_ms", "image_20_steps_ms", "diffusers_image_ms", "launches_per_step", "host_ms_per_step")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sdgen", default=str(ROOT / "build/default/app/sdgen"))
    ap.add_argument("--model-check", default=str(ROOT / "build/default/tests/model_check/sdgen_model_check"))
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/e2e"))
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--images", type=int, default=22, help="sdgen images in one process (the first 2 dropped)")
    ap.add_argument("--runs", type=int, default=20, help="diffusers images and component timings")
    args = ap.parse_args(argv)
    if args.images < 4 or args.runs < 3:
        ap.error("--images must be at least 4 and --runs at least 3")
    return args


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))]


def summary(values):
    return {"median_ms": statistics.median(values), "p10_ms": pct(values, 0.1), "p90_ms": pct(values, 0.9),
            "n": len(values)}


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r


def make_model(work):
    refs = work / "refs"
    if not (refs / "sd15_random.json").exists():
        run([sys.executable, str(ROOT / "tests/reference/make_sd15_random.py"), str(work), str(refs)])
    meta = json.loads((refs / "sd15_random.json").read_text())
    step = meta["summary"]["fp16"]["torch_unet_step"]
    return work / "sd15-random", refs, step


def sdgen_step(model_check, model, refs):
    r = run([model_check, "--refs", str(refs / "sd15_random"), "--model", str(model), "--precision", "fp16"])
    m = re.search(r"fp16\s+unet step\s+batch 2: (\d+) launches, median ([0-9.]+) ms \(p10 ([0-9.]+), p90 ([0-9.]+)",
                  r.stdout)
    if not m:
        raise RuntimeError("no fp16 'unet step' line in sdgen_model_check's output:\n" + r.stdout[-2000:])
    step = {"launches": int(m.group(1)), "median_ms": float(m.group(2)), "p10_ms": float(m.group(3)),
            "p90_ms": float(m.group(4))}
    barriers = re.search(r"fp16\s+unet step\s+batch 2: .*; (\d+) barriers", r.stdout)
    if barriers:  # barrier intervals of the step (launches in one interval overlap)
        step["barriers"] = int(barriers.group(1))
    kv = re.search(r"fp16\s+unet context\s+K/V projections, once per image before the steps: (\d+) launches, "
                   r"median ([0-9.]+) ms", r.stdout)
    span = re.search(r"fp16\s+unet step GPU time \(timestamps at its start and end\): median ([0-9.]+) ms "
                     r"\(p10 ([0-9.]+), p90 ([0-9.]+)", r.stdout)
    if span:  # the quantity CUDA events around diffusers' graph replay measure: the step's GPU time
        step["wall_median_ms"], step["wall_p10_ms"], step["wall_p90_ms"] = (step["median_ms"], step["p10_ms"],
                                                                         step["p90_ms"])
        step["median_ms"], step["p10_ms"], step["p90_ms"] = (float(span.group(1)), float(span.group(2)),
                                                             float(span.group(3)))
        step["timed_by"] = "GPU timestamps at the step's start and end (wall: submit + wait)"
    if kv:
        step["context_kv_launches"] = int(kv.group(1))
        step["context_kv_ms"] = float(kv.group(2))
        step["median_plus_kv_over_20_ms"] = round(step["median_ms"] + step["context_kv_ms"] / 20, 3)
    return step


def sdgen_profile(sdgen, model, work):
    path = work / "profile.json"
    run([sdgen, "--profile-conv", "-m", str(model), "-W", "512", "-H", "512", "--precision", "fp16", "--json",
         str(path)])
    graphs = json.loads(path.read_text())["graphs"]
    step = next(g for g in graphs if g["name"] == "unet step")
    return {"launches": step["launches"], "gpu_ms": step["total_ms"]}


def sdgen_images(sdgen, model, work, images):
    cmd = [sdgen, "-m", str(model), "-p", PROMPT, "-s", "1", "--steps", "20", "--sampler", "euler", "--cfg-scale",
           "7", "-W", "512", "-H", "512", "--precision", "fp16", "--batch-count", str(images), "-o",
           str(work / "sdgen.png"), "-v"]
    err_path = work / "sdgen-images.stderr"
    with open(err_path, "w") as err_file:  # a file, not a pipe: stderr is read after the run
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, text=True)
        wrote = []
        for line in proc.stdout:  # the arrival time of each "wrote" line (sdgen flushes after each)
            if line.startswith("wrote "):
                wrote.append(time.perf_counter())
        proc.wait()
    err = err_path.read_text()
    if proc.wait() != 0 or len(wrote) != images:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}, {len(wrote)} images):\n{err[-3000:]}")
    per_image = [(b - a) * 1000 for a, b in zip(wrote[1:], wrote[2:])]  # images 3.. (2 warm-up)

    def ms(label):
        m = re.search(rf"^\s*{label}\s+([0-9.]+) ms", err, re.M)
        if not m:
            raise RuntimeError(f"no '{label}' line in sdgen -v:\n{err[-2000:]}")
        return float(m.group(1))
    def median_per_image(label):  # the median per image (sdgen -v prints it for several images), else the mean
        m = re.search(rf"^\s*{label}\s+[0-9.]+ ms.*\(median ([0-9.]+) ms per image\)", err, re.M)
        return float(m.group(1)) if m else ms(label) / images
    step = re.search(r"median ([0-9.]+) ms/step", err)
    return {"image": summary(per_image), "text_ms": median_per_image("text encode"), "decode_ms": median_per_image("decode"),
            "png_encode_ms": ms("png encode") / images,
            "file_write_ms": ms("file write") / images, "step_wall_ms": float(step.group(1)), "load_ms": ms("model load"), "images": images}


DIFFUSERS_CHILD = r"""
import json, statistics, sys, time, torch
from diffusers import EulerDiscreteScheduler, StableDiffusionPipeline
sys.path.insert(0, sys.argv[3])
from cuda_timing import time_ms
folder, runs, prompt = sys.argv[1], int(sys.argv[2]), sys.argv[4]
pipe = StableDiffusionPipeline.from_pretrained(folder, torch_dtype=torch.float16, safety_checker=None,
                                               requires_safety_checker=False).to("cuda")
pipe.scheduler = EulerDiscreteScheduler.from_config(pipe.scheduler.config)
pipe.set_progress_bar_config(disable=True)
def image():
    pipe(prompt, num_inference_steps=20, guidance_scale=7.0, height=512, width=512,
         generator=torch.Generator("cuda").manual_seed(1))
images = []
for i in range(runs + 2):
    torch.cuda.synchronize(); t0 = time.perf_counter()
    image()
    torch.cuda.synchronize()
    if i >= 2: images.append((time.perf_counter() - t0) * 1000)
latents = torch.randn(1, 4, 64, 64, device="cuda", dtype=torch.float16)
ids = pipe.tokenizer([prompt, ""], padding="max_length", max_length=77, return_tensors="pt").input_ids.to("cuda")
with torch.no_grad():
    vae = time_ms(lambda: pipe.vae.decode(latents / pipe.vae.config.scaling_factor), 3, runs)
    text = time_ms(lambda: pipe.text_encoder(ids), 3, runs)
print(json.dumps({"images_ms": images, "vae_decode": vae, "text_encoder": text}), flush=True)
"""


def diffusers_side(model, runs):
    r = run([sys.executable, "-c", DIFFUSERS_CHILD, str(model), str(runs), str(ROOT / "bench/reference"), PROMPT])
    return json.loads(r.stdout.strip().splitlines()[-1])


def device_name(sdgen):
    r = subprocess.run([sdgen, "--list-devices"], capture_output=True, text=True)
    m = re.search(r"^device 0: (.*)$", r.stdout, re.M)  # "device 0: NAME (type)", then "  driver: ..."
    d = re.search(r"^\s+driver: (.*)$", r.stdout, re.M)
    return (m.group(1) + (", " + d.group(1) if d else "")) if m else "unknown"


def main(argv=None):
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    model, refs, torch_step = make_model(args.work)
    step = sdgen_step(args.model_check, model, refs)
    profile = sdgen_profile(args.sdgen, model, args.work)
    images = sdgen_images(args.sdgen, model, args.work, args.images)
    ref = diffusers_side(model, args.runs)
    result = {
        "device": device_name(args.sdgen),
        "date": datetime.date.today().isoformat(),
        "unet_step_ms": round(step["median_ms"], 3),
        "diffusers_eager_ms": round(torch_step["eager"]["median_ms"], 3),
        "diffusers_cudagraph_ms": round(torch_step["cuda_graph"]["median_ms"], 3),
        "vae_decode_ms": round(images["decode_ms"], 2),
        "text_ms": round(images["text_ms"], 2),
        "image_20_steps_ms": round(images["image"]["median_ms"], 1),
        "diffusers_image_ms": round(statistics.median(ref["images_ms"]), 1),
        "launches_per_step": profile["launches"],
        "host_ms_per_step": round(images["step_wall_ms"] - step["median_ms"], 2),
    }
    assert tuple(result) == FIELDS
    details = {"sdgen_step": step, "sdgen_profile": profile, "sdgen_images": images, "torch_step": torch_step,
               "diffusers": {"image": summary(ref["images_ms"]), "vae_decode": ref["vae_decode"],
                             "text_encoder": ref["text_encoder"]}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    args.out.with_name(args.out.stem + "-details.json").write_text(json.dumps(details, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    d = details["diffusers"]
    print(f"{'':24}{'sdgen':>12}{'diffusers':>12}")
    print(f"{'UNet step (graph)':24}{result['unet_step_ms']:>12.2f}{result['diffusers_cudagraph_ms']:>12.2f}")
    if "context_kv_ms" in step:
        print(f"{'  + context K/V / 20':24}{step['median_plus_kv_over_20_ms']:>12.2f}"
              f"{'':>12}  (K/V once per image: {step['context_kv_ms']:.3f} ms)")
    print(f"{'UNet step (eager)':24}{'':>12}{result['diffusers_eager_ms']:>12.2f}")
    print(f"{'VAE decode 512':24}{result['vae_decode_ms']:>12.2f}{d['vae_decode']['median']:>12.2f}")
    print(f"{'text encoder batch 2':24}{result['text_ms']:>12.2f}{d['text_encoder']['median']:>12.2f}")
    print(f"{'20-step image':24}{result['image_20_steps_ms']:>12.1f}{result['diffusers_image_ms']:>12.1f}")


if __name__ == "__main__":
    main()
