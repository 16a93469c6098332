#!/usr/bin/env python3
"""sdgen serve under load (issue 26; issue 27 with two GPUs): images/s and per-request latency from concurrent
loopback clients, for several --devices configurations.

  python3 bench/serve_bench.py --sdgen build/default/app/sdgen --out RESULT.json
      [--model sd15-random|builtin|PATH] [--work DIR] [--size 512] [--steps 20] [--requests 32]
      [--depths 1,4,16] [--devices-list "0;0,0"]

For each entry of --devices-list (";"-separated; "0" is one engine on GPU 0, "0,0" two engines on it, "0,1" one
on each of two GPUs) one `sdgen serve` starts on a free loopback port with that --devices and the model; one
request per engine warms it up (kernels compiled or read from the cache, model loaded), then for each queue depth
D of --depths, D client threads send --requests txt2img requests in all (each thread takes the next request
when its previous one is answered, so D requests are in the server at any time) and wait for each answer.
Per configuration and depth: images/s (images answered / wall time from the first request sent to the last
answer), p50/p90 latency of a request (send to answer), errors (anything but 200 with one image).

--model sd15-random builds the SD 1.5 architecture with random weights as an fp16 diffusers folder in --work
(tests/reference/make_sd15_random.py's build and save, as bench/residency.py does; needs torch, transformers
and diffusers); `sdgen serve` stores it in fp16 on a GPU with fp16 support (its automatic precision), fp32 on a
CPU device such as lavapipe. --model builtin is the built-in model (no Python dependencies: CI runs the bench
that way with tiny sizes).

RESULT.json holds the summary fields issue 27 asks for, the first configuration as "1gpu" and the second as
"2gpu" (whatever their --devices: devices_1gpu and devices_2gpu say which): device, date, images_per_s_1gpu,
images_per_s_2gpu (at the deepest queue), p50_ms_1gpu, p50_ms_2gpu (at depth 1: one request alone), requests
(per configuration and depth), errors (in all); then every configuration and depth under "configs". The same
text goes to stdout.
"""
import argparse
import base64
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
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROMPT = "a photo of an astronaut riding a horse on the moon"


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sdgen", default=str(ROOT / "build/default/app/sdgen"))
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--model", default="sd15-random", help="sd15-random, builtin, or a model path")
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/serve-bench"))
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--requests", type=int, default=32, help="requests per configuration and depth")
    ap.add_argument("--depths", default="1,4,16", help="queue depths: concurrent clients, comma-separated")
    ap.add_argument("--devices-list", default="0;0,0", help="--devices values to compare, ';'-separated")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one request may take")
    args = ap.parse_args(argv)
    try:
        args.depths = [int(d) for d in args.depths.split(",")]
    except ValueError:
        ap.error("--depths: expected integers separated by commas, e.g. 1,4,16")
    args.devices_list = [d.strip() for d in args.devices_list.split(";") if d.strip()]
    if not args.devices_list or any(not re.fullmatch(r"\d+(,\d+)*", d) for d in args.devices_list):
        ap.error("--devices-list: expected --devices values separated by ';', e.g. \"0;0,0\"")
    if min(args.depths) < 1 or args.requests < 1 or args.steps < 1:
        ap.error("--depths, --requests and --steps must be at least 1")
    if args.size < 8 or args.size % 8:
        ap.error("--size must be a positive multiple of 8")
    return args


def make_model(model, work):
    """The path to pass as -m (None: the built-in model)."""
    if model == "builtin":
        return None
    if model != "sd15-random":
        return model
    folder = work / "sd15-random"
    if not (folder / "model_index.json").exists():
        sys.path.insert(0, str(ROOT / "tests" / "reference"))
        import make_sd15_random as m
        m.save(m.build(m.SD15), work, ldm=False)  # the folder is all the server loads
    return str(folder)


class Server:
    """`sdgen serve` on a free loopback port; stderr (its JSON request log) kept in a file."""

    def __init__(self, sdgen, model, devices, queue, work):
        work.mkdir(parents=True, exist_ok=True)
        tag = devices.replace(",", "-")
        self.log_path = work / f"serve-{tag}.log"
        self._out_path = work / f"serve-{tag}.out"
        cmd = [sdgen, "serve", "--port", "0", "--devices", devices, "--queue", str(queue)]
        if model:
            cmd += ["-m", model]
        with open(self.log_path, "wb") as log, open(self._out_path, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=log)
        deadline = time.time() + 600
        while True:
            m = re.search(r"listening on http://[^:]+:(\d+)", self._out_path.read_text(errors="replace"))
            if m:
                self.url = f"http://127.0.0.1:{m.group(1)}"
                return
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError(f"sdgen serve --devices {devices} did not start:\n" +
                                   self.log_path.read_text(errors="replace")[-3000:])
            time.sleep(0.1)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


class GpuMemoryMonitor:
    """nvidia-smi's memory.used per GPU, polled every 200 ms while a configuration runs: the peak of each GPU
    (MiB; {} where there is no nvidia-smi, e.g. lavapipe). nvidia-smi numbers GPUs by PCI bus; Vulkan's order
    may differ (sdgen --list-devices prints each device's UUID)."""

    def __init__(self):
        self.peaks, self._stop = {}, threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=index,memory.used", "--format=csv,noheader,nounits"],
                                     capture_output=True, text=True, timeout=10).stdout
            except (OSError, subprocess.SubprocessError):
                return
            for line in out.splitlines():
                parts = [x.strip() for x in line.split(",")]
                if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                    self.peaks[parts[0]] = max(self.peaks.get(parts[0], 0), int(parts[1]))
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def process_device_peaks(log_path):
    """Per engine, the largest figures of its model_cache lines in the server's log: `device_peak_mib`, the
    process's peak use of that engine's device (VK_EXT_memory_budget, driver allocations included; engines on
    one device report the same heap; 0 without the extension, e.g. lavapipe), and `blocks_peak_mib`, the peak of
    the engine's own device memory blocks."""
    peaks = {}
    for line in pathlib.Path(log_path).read_text(errors="replace").splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict) or ev.get("event") != "model_cache":
            continue
        engine = peaks.setdefault(str(ev.get("engine")), {"device_peak_mib": 0, "blocks_peak_mib": 0})
        for key in engine:
            if isinstance(ev.get(key), (int, float)):
                engine[key] = max(engine[key], ev[key])
    return peaks


def txt2img(url, seed, args):
    """(latency in ms, error text or None) of one request."""
    body = json.dumps({"prompt": PROMPT, "seed": seed, "steps": args.steps, "width": args.size,
                       "height": args.size, "sampler_name": "Euler"}).encode()
    req = urllib.request.Request(url + "/sdapi/v1/txt2img", data=body, headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=args.timeout) as r:
            images = json.loads(r.read())["images"]
            ms = (time.perf_counter() - t0) * 1000
            if len(images) != 1 or not base64.b64decode(images[0]).startswith(b"\x89PNG"):
                return ms, "no PNG in the answer"
            return ms, None
    except (urllib.error.URLError, OSError, ValueError, KeyError) as e:
        detail = e.read().decode(errors="replace")[:200] if isinstance(e, urllib.error.HTTPError) else ""
        return (time.perf_counter() - t0) * 1000, f"{e} {detail}".strip()


def percentile(values, q):
    """Linear interpolation between the closest ranks (numpy's default)."""
    v = sorted(values)
    if not v:
        return None
    k = (len(v) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def run_depth(url, depth, args, first_seed):
    """`args.requests` requests from `depth` client threads; each thread sends its next one when answered."""
    lock = threading.Lock()
    next_index = [0]
    latencies, errors = [], []

    def client():
        while True:
            with lock:
                i = next_index[0]
                if i >= args.requests:
                    return
                next_index[0] += 1
            ms, err = txt2img(url, first_seed + i, args)
            with lock:
                (errors if err else latencies).append(err if err else ms)

    threads = [threading.Thread(target=client) for _ in range(min(depth, args.requests))]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    r2 = lambda x: None if x is None else round(x, 2)
    return {"depth": depth, "requests": args.requests, "images": len(latencies), "errors": len(errors),
            "error_samples": errors[:3], "wall_s": r2(wall), "images_per_s": r2(len(latencies) / wall),
            "p50_ms": r2(percentile(latencies, 0.5)), "p90_ms": r2(percentile(latencies, 0.9)),
            "mean_ms": r2(statistics.fmean(latencies)) if latencies else None}


def bench_config(devices, model, args):
    engines = len(devices.split(","))
    with GpuMemoryMonitor() as gpu_memory:
        result = run_config(devices, engines, model, args)
    result["nvidia_smi_peak_mib"] = gpu_memory.peaks
    return result


def run_config(devices, engines, model, args):
    server = Server(args.sdgen, model, devices, max(args.depths) + engines, args.work)
    try:
        result = measure_server(server, devices, engines, args)
    finally:
        code = server.stop()
        if code != 0:
            print(f"warning: sdgen serve --devices {devices} exited with {code}", file=sys.stderr)
    result["process_device_peak_mib"] = process_device_peaks(server.log_path)
    return result


def measure_server(server, devices, engines, args):
    # Warm-up: one request per engine at once, so every engine has loaded the model and its kernels.
    warm = [None] * engines
    threads = [threading.Thread(target=lambda i=i: warm.__setitem__(i, txt2img(server.url, 1 + i, args)))
               for i in range(engines)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [w[1] for w in warm if w[1]]
    if failed:
        raise RuntimeError(f"--devices {devices}: the warm-up failed: {failed[0]}")
    result = {"devices": devices, "engines": engines, "warmup_ms": [round(w[0]) for w in warm], "depths": []}
    for depth in args.depths:
        r = run_depth(server.url, depth, args, 1000 * depth)
        print(f"--devices {devices}, depth {depth}: {r['images_per_s']} images/s, p50 {r['p50_ms']} ms, "
              f"p90 {r['p90_ms']} ms, {r['errors']} errors", flush=True)
        result["depths"].append(r)
    return result


def device_name(sdgen):
    out = subprocess.run([sdgen, "--list-devices"], capture_output=True, text=True).stdout
    m = re.search(r"^device 0: (.+) \(\w+\)$", out, re.M)
    return m.group(1) if m else "unknown"


def summary(configs, args):
    s = {"device": device_name(args.sdgen), "date": datetime.date.today().isoformat()}
    for key, c in zip(("1gpu", "2gpu"), configs):
        by_depth = {d["depth"]: d for d in c["depths"]}
        s[f"images_per_s_{key}"] = by_depth[max(by_depth)]["images_per_s"]
        s[f"p50_ms_{key}"] = by_depth[min(by_depth)]["p50_ms"]
        s[f"devices_{key}"] = c["devices"]
        s[f"process_device_peak_mib_{key}"] = c.get("process_device_peak_mib", {})
        s[f"nvidia_smi_peak_mib_{key}"] = c.get("nvidia_smi_peak_mib", {})
    s["requests"] = args.requests
    s["errors"] = sum(d["errors"] for c in configs for d in c["depths"])
    return s


def main(argv=None):
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    model = make_model(args.model, args.work)
    configs = [bench_config(devices, model, args) for devices in args.devices_list]
    result = summary(configs, args)
    result.update({"model": args.model, "size": args.size, "steps": args.steps, "depths": args.depths,
                   "configs": configs})
    text = json.dumps(result, indent=2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    print(text)
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
