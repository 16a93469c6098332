#!/usr/bin/env python3
"""Model residency on a GPU machine (issue 18): sdgen's load time, peak memory and cold compile beside diffusers'.

  python3 bench/residency.py --sdgen build/default/app/sdgen --work /tmp/residency --out RESULT.json
      [--runs 3] [--cold-runs 3] [--steps 20] [--size 512] [--details DETAILS.json] [--skip-diffusers]

In one call (scripts/device/residency.sh): builds the SD 1.5 architecture with random weights as an fp16
diffusers folder and single-file checkpoint (tests/reference/make_sd15_random.py's build and save, no
references), then
  - cold compile: `--cold-runs` sdgen runs of the folder, each with every cache empty — sdgen's (SDGEN_CACHE_DIR
    fresh) and the NVIDIA driver's shader cache (__GL_SHADER_DISK_CACHE_PATH fresh: the driver keys it on the
    SPIR-V, so one cold run would otherwise warm the next) — the median of their "kernel compile" time plus the
    part of their model load beyond a warm load (the load compiles the packing kernels);
  - sdgen, folder and single file, `--runs` times each (page cache and kernel cache warm from the first): the
    "model load" time of a 20-step 512x512 fp16 image, the peak GPU memory the process reports (sdgen -v:
    VK_EXT_memory_budget) and the peak nvidia-smi shows for the process (polled every 20 ms), resident weights;
  - diffusers: StableDiffusionPipeline.from_pretrained(folder, torch_dtype=float16).to("cuda") timed `--runs`
    times in one process (CUDA initialized before the first), then the same 20-step 512x512 image with the
    peak from nvidia-smi and torch.cuda.max_memory_allocated.
Medians are reported. RESULT.json holds exactly the issue's fields (device, date, load_s_folder,
load_s_single_file, diffusers_load_s, peak_mib, diffusers_peak_mib, weights_mib, checkpoint_mib, cold_compile_s);
peak_mib is the larger of sdgen's two measures. DETAILS.json keeps every run.
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
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROMPT = "a photo of an astronaut riding a horse on the moon"
FIELDS = ("device", "date", "load_s_folder", "load_s_single_file", "diffusers_load_s", "peak_mib",
          "diffusers_peak_mib", "weights_mib", "checkpoint_mib", "cold_compile_s")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sdgen", default=str(ROOT / "build/default/app/sdgen"))
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/residency"))
    ap.add_argument("--out", type=pathlib.Path, required=True, help="the results JSON (the issue's fields)")
    ap.add_argument("--details", type=pathlib.Path, help="every run (default: OUT with -details)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--skip-diffusers", action="store_true")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.steps < 1 or args.size < 64 or args.size % 64:
        ap.error("--steps must be at least 1 and --size a multiple of 64")
    if args.details is None:
        args.details = args.out.with_name(args.out.stem + "-details.json")
    return args


# ---- sdgen -v output ----
def parse_sdgen_verbose(text):
    """The numbers residency needs from `sdgen -v` (stderr): milliseconds of load and compile, MiB of weights per
    component and of the process's peak (VK_EXT_memory_budget, else sdgen's blocks)."""
    def ms(label):
        m = re.search(rf"^\s*{label}\s+([0-9.]+) ms", text, re.M)
        if not m:
            raise ValueError(f"no '{label}' line in sdgen's output")
        return float(m.group(1))
    weights = {m.group(1).strip(): float(m.group(2))
               for m in re.finditer(r"^\s{2}(text encoder|UNet|VAE decoder)\s+weights\s+([0-9.]+)", text, re.M)}
    peak = re.search(r"^\s*peak\s+([0-9.]+) \((process|sdgen)", text, re.M)
    if not weights or not peak:
        raise ValueError("no memory lines in sdgen's output (was -v given?)")
    # The conv autotune runs while the graphs record, inside "kernel compile" (it compiles and times candidates).
    tune = re.search(r"^conv autotune: (\d+) problems tuned in ([0-9.]+) s(?: \(([0-9.]+) s of it waiting)?", text, re.M)
    return {"load_ms": ms("model load"), "compile_ms": ms("kernel compile"), "weights_mib": weights,
            "peak_mib": float(peak.group(1)), "peak_source": peak.group(2),
            "autotune_problems": int(tune.group(1)) if tune else None,
            "autotune_s": float(tune.group(2)) if tune else None,
            "autotune_compile_s": float(tune.group(3)) if tune and tune.group(3) else None}


def median(values):
    return statistics.median(values) if values else None


def results(device, sdgen_runs, diffusers, cold, checkpoint_mib):
    """The results file: exactly the issue's fields, medians of the runs."""
    def peak(run):  # the larger of the process's own and nvidia-smi's measure
        return max(run["peak_mib"], run.get("nvidia_smi_peak_mib") or 0)
    all_runs = sdgen_runs["folder"] + sdgen_runs["single_file"]
    warm_load_ms = median([x["load_ms"] for x in sdgen_runs["folder"]])
    r = {
        "device": device,
        "date": datetime.date.today().isoformat(),
        "load_s_folder": round(median([x["load_ms"] for x in sdgen_runs["folder"]]) / 1000, 3),
        "load_s_single_file": round(median([x["load_ms"] for x in sdgen_runs["single_file"]]) / 1000, 3),
        "diffusers_load_s": round(median(diffusers["load_s"]), 3) if diffusers else None,
        "peak_mib": round(median([peak(x) for x in all_runs]), 1),
        "diffusers_peak_mib": round(diffusers["peak_mib"], 1) if diffusers else None,
        "weights_mib": round(median([sum(x["weights_mib"].values()) for x in all_runs]), 1),
        "checkpoint_mib": round(checkpoint_mib, 1),
        # the compile stage, plus what the cold load took beyond a warm one (it compiles the packing kernels)
        "cold_compile_s": round(median([c["compile_ms"] + max(0.0, c["load_ms"] - warm_load_ms) for c in cold]) / 1000, 2),
    }
    assert tuple(r) == FIELDS
    return r


def write_json(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1) + "\n")


# ---- GPU side ----
class NvidiaSmiPeak:
    """Polls nvidia-smi for the GPU memory of one process (or, where per-process figures are unavailable, of the
    whole GPU minus what was in use before) and keeps the peak in MiB."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop_flag = pid, 0.0, threading.Event()
        self.baseline = self._total_used()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    @staticmethod
    def _query(args):
        try:
            return subprocess.run(["nvidia-smi", *args, "--format=csv,noheader,nounits"], capture_output=True,
                                  text=True, timeout=5).stdout
        except (OSError, subprocess.TimeoutExpired):
            return ""

    def _total_used(self):
        out = self._query(["--query-gpu=memory.used"]).split()
        return float(out[0]) if out else 0.0

    def _sample(self):
        for line in self._query(["--query-compute-apps=pid,used_memory"]).splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 2 and parts[0] == str(self.pid) and parts[1].replace(".", "").isdigit():
                return float(parts[1])
        return max(0.0, self._total_used() - self.baseline)

    def _poll(self):
        while not self.stop_flag.is_set():
            self.peak = max(self.peak, self._sample())
            time.sleep(0.02)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join()


def run_sdgen(sdgen, model, args, cache_dir, out_png, driver_cache=None):
    cmd = [sdgen, "-m", str(model), "-p", PROMPT, "-s", "1", "--steps", str(args.steps), "-W", str(args.size),
           "-H", str(args.size), "--precision", "fp16", "-o", str(out_png), "-v"]
    env = dict(os.environ, SDGEN_CACHE_DIR=str(cache_dir))
    if driver_cache:
        env["__GL_SHADER_DISK_CACHE_PATH"] = str(driver_cache)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with NvidiaSmiPeak(proc.pid) as smi:
        out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out}\n{err}")
    r = parse_sdgen_verbose(err)
    r["nvidia_smi_peak_mib"] = smi.peak
    return r


DIFFUSERS_CHILD = r"""
import gc, json, subprocess, sys, threading, time, torch
from diffusers import StableDiffusionPipeline
folder, runs, steps, size, prompt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
torch.cuda.init(); torch.zeros(1, device="cuda"); torch.cuda.synchronize()  # CUDA context outside the timing
load = []
for _ in range(runs):
    t0 = time.perf_counter()
    pipe = StableDiffusionPipeline.from_pretrained(folder, torch_dtype=torch.float16, safety_checker=None,
                                                   requires_safety_checker=False).to("cuda")
    torch.cuda.synchronize()
    load.append(time.perf_counter() - t0)
    if len(load) < runs:
        del pipe; gc.collect(); torch.cuda.empty_cache()
pipe.set_progress_bar_config(disable=True)
torch.cuda.reset_peak_memory_stats()
print("READY", flush=True); sys.stdin.readline()  # the parent starts polling nvidia-smi
pipe(prompt, num_inference_steps=steps, height=size, width=size, generator=torch.Generator("cuda").manual_seed(1))
torch.cuda.synchronize()
print(json.dumps({"load_s": load, "torch_max_allocated_mib": torch.cuda.max_memory_allocated() / 2**20}), flush=True)
"""


def run_diffusers(folder, args):
    proc = subprocess.Popen([sys.executable, "-c", DIFFUSERS_CHILD, str(folder), str(args.runs), str(args.steps),
                             str(args.size), PROMPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if line.strip() != "READY":
        proc.wait()
        raise RuntimeError(f"diffusers child failed before generating: {line}")
    with NvidiaSmiPeak(proc.pid) as smi:
        proc.stdin.write("\n")
        proc.stdin.flush()
        result = json.loads(proc.stdout.readline())
        proc.wait()
    result["peak_mib"] = smi.peak
    return result


def make_model(work):
    """The fp16 diffusers folder and the single file, as make_sd15_random.py writes them (references skipped)."""
    folder, single = work / "sd15-random", work / "sd15-random-ldm.safetensors"
    if not (folder / "model_index.json").exists() or not single.exists():
        sys.path.insert(0, str(ROOT / "tests" / "reference"))
        import make_sd15_random as m
        m.save(m.build(m.SD15), work)
    return folder, single


def checkpoint_mib(folder):
    return sum(f.stat().st_size for f in folder.rglob("*.safetensors")) / 2**20


def device_name(sdgen):
    out = subprocess.run([sdgen, "--list-devices"], capture_output=True, text=True).stdout
    m = re.search(r"^device 0: (.+) \(\w+\)$", out, re.M)
    return m.group(1) if m else "unknown"


def main(argv=None):
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    folder, single = make_model(args.work)
    t0 = time.time()
    cold = []
    for i in range(args.cold_runs):
        cold_cache = pathlib.Path(tempfile.mkdtemp(prefix="sdgen-cold-cache-"))
        driver_cache = pathlib.Path(tempfile.mkdtemp(prefix="nvidia-cold-cache-"))
        c = run_sdgen(args.sdgen, folder, args, cold_cache, args.work / "cold.png", driver_cache)
        cold.append(c)
        print(f"cold run {i + 1}: kernel compile {c['compile_ms'] / 1000:.2f} s (of which conv autotune "
              f"{c['autotune_s']} s, {c['autotune_problems']} problems, {c['autotune_compile_s']} s of it waiting for "
              f"kernels), load {c['load_ms'] / 1000:.2f} s", flush=True)
    runs = {"folder": [], "single_file": []}
    for i in range(args.runs):
        for key, model in (("folder", folder), ("single_file", single)):
            r = run_sdgen(args.sdgen, model, args, cold_cache, args.work / f"{key}.png")
            runs[key].append(r)
            print(f"{key} run {i + 1}: load {r['load_ms']:.0f} ms, compile {r['compile_ms']:.0f} ms, peak "
                  f"{r['peak_mib']:.0f} MiB ({r['peak_source']}), nvidia-smi {r['nvidia_smi_peak_mib']:.0f} MiB, "
                  f"weights {sum(r['weights_mib'].values()):.0f} MiB", flush=True)
    diffusers = None if args.skip_diffusers else run_diffusers(folder, args)
    if diffusers:
        print(f"diffusers: load {diffusers['load_s']} s, peak {diffusers['peak_mib']:.0f} MiB (nvidia-smi), torch "
              f"max allocated {diffusers['torch_max_allocated_mib']:.0f} MiB", flush=True)
    result = results(device_name(args.sdgen), runs, diffusers, cold, checkpoint_mib(folder))
    write_json(args.out, result)
    write_json(args.details, {"result": result, "cold": cold, "sdgen": runs, "diffusers": diffusers,
                              "steps": args.steps, "size": args.size, "seconds": round(time.time() - t0, 1)})
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
