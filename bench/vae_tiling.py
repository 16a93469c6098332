#!/usr/bin/env python3
"""VAE tiling on a GPU machine (issue 21): peak memory of a 2048x2048 SD 1.5 decode (random weights), tiled.

  python3 bench/vae_tiling.py --bench build/default/bench/vae_decode_bench --work /tmp/vaetile --out RESULT.json
      [--size 2048] [--untiled 1024,2048] [--sdgen build/default/app/sdgen --pipeline-steps 1]

Builds the SD 1.5 architecture with random weights as an fp16 diffusers folder (make_sd15_random.py, as
bench/residency.py does), then runs bench/vae_decode_bench (the VAE decoder alone, fp16, two decodes: the first
records and compiles) tiled at --size, and untiled at each --untiled size for comparison (the activations that
auto tiling weighs, docs/vae-tiling.md), each with nvidia-smi polled for the process's peak (residency.py's
NvidiaSmiPeak). With --sdgen, also one whole `sdgen -W size -H size --vae-tiling -v` generation (the UNet's own
activations at that size come on top; reported, not part of the 3 GB claim). RESULT.json: every run's numbers
and "peak_mib", the larger of the process's own measure and nvidia-smi's.
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from residency import NvidiaSmiPeak, make_model, parse_sdgen_verbose  # noqa: E402


def run_bench(bench, folder, size, tiling, work):
    js = work / f"decode-{size}-{tiling}.json"
    cmd = [bench, str(folder), str(size), str(size), "--tiling", tiling, "--precision", "fp16", "--json", str(js)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with NvidiaSmiPeak(proc.pid) as smi:
        out, err = proc.communicate()
    print(out + err, flush=True)
    if proc.returncode != 0:
        return {"size": size, "tiling": tiling, "error": (err or out).strip()[-400:], "nvidia_smi_peak_mib": smi.peak}
    r = json.loads(js.read_text())
    r["nvidia_smi_peak_mib"] = smi.peak
    r["peak_mib"] = max(r["peak_sdgen_mib"], r["peak_heap_mib"], smi.peak)
    return r


def run_pipeline(sdgen, folder, size, steps, work):
    cmd = [sdgen, "-m", str(folder), "-p", "a photo of an astronaut riding a horse on the moon", "-s", "1",
           "--steps", str(steps), "-W", str(size), "-H", str(size), "--precision", "fp16", "--vae-tiling", "-v",
           "-o", str(work / f"pipeline-{size}.png")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with NvidiaSmiPeak(proc.pid) as smi:
        out, err = proc.communicate()
    print(out + err, flush=True)
    r = {"size": size, "steps": steps, "returncode": proc.returncode, "nvidia_smi_peak_mib": smi.peak,
         "tiled": "VAE decoded in tiles" in err}
    try:
        r.update(parse_sdgen_verbose(err))
    except ValueError as e:
        r["error"] = str(e)
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=str(ROOT / "build/default/bench/vae_decode_bench"))
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/vaetile"))
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--untiled", default="1024,2048", help="sizes decoded untiled for comparison ('' for none)")
    ap.add_argument("--sdgen", help="also one whole generation at --size with --vae-tiling")
    ap.add_argument("--pipeline-steps", type=int, default=1)
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    folder, _ = make_model(args.work)
    result = {"tiled": run_bench(args.bench, folder, args.size, "on", args.work),
              "untiled": [run_bench(args.bench, folder, int(s), "off", args.work) for s in args.untiled.split(",") if s]}
    if args.sdgen:
        result["pipeline"] = run_pipeline(args.sdgen, folder, args.size, args.pipeline_steps, args.work)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    t = result["tiled"]
    print(f"tiled {args.size}x{args.size} decode peak: {t.get('peak_mib')} MiB (limit 3 GB = 2861 MiB)")
    return 0 if t.get("peak_mib", 1e9) <= 3e9 / 2**20 else 1


if __name__ == "__main__":
    sys.exit(main())
