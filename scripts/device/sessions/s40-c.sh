#!/usr/bin/env bash
# Session 40, call C (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`). Usage: s40-c.sh [KNOBS...]
# (environment assignments for "on"; default SDGEN_CONV_HALF_256x128=1 SDGEN_CONV_HALF_256x160=1, the opt-in 256x128
# and 256x160 fp16-accumulator conv candidates). SD 1.5's fp16 `--profile-conv` off / on / off / on with fresh tuning caches (the VAE decode's conv, its
# 512^2 layers, the tuner's choices and time), then the conv tables with cuDNN in the same run (fp16 with the "on"
# knobs, with the tuned rows; fp32) -> docs/perf-data/h200-bench-conv2d-{fp16,fp32}.json.
set -uo pipefail
ON=("$@"); [ ${#ON[@]} -eq 0 ] && ON=(SDGEN_CONV_HALF_256x128=1 SDGEN_CONV_HALF_256x160=1)
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
echo "on: ${ON[*]}"
rm -rf /tmp/e2e
timeout 120 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
for r in off-1 on-1 off-2 on-2; do
  [ $SECONDS -gt 200 ] && [ "$r" != on-2 ] && [ "$r" != off-2 ] && { echo "skipped profile $r (${SECONDS} s)"; continue; }
  rm -rf /tmp/cache40c
  if [ "${r%-*}" = on ]; then knobs=("${ON[@]}"); else knobs=(); fi
  env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/cache40c timeout 150 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/profile-sd15-$r.json" > /tmp/profile-$r.txt 2>&1; echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
import os
runs = {r: json.load(open(f"{sys.argv[1]}/profile-sd15-{r}.json")) for r in ("off-1", "on-1", "off-2", "on-2")
        if os.path.exists(f"{sys.argv[1]}/profile-sd15-{r}.json")}
for r, d in runs.items():
    a = d["autotune"]
    print(r, f"tuned {a['problems_tuned']} in {a['seconds']:.2f} s ({a['launches']} launches) |",
          " | ".join(f"{g['name']} {g['total_ms']:.3f} conv {g['by_type']['conv']['ms']:.3f}" for g in d["graphs"][:2]))
if "off-2" not in runs or "on-2" not in runs: sys.exit(0)
print("== layers whose candidate differs (off-2 -> on-2), ms")
a, b = [{(g["name"], c["layer"]): c for g in runs[r]["graphs"] for c in g.get("convs", [])} for r in ("off-2", "on-2")]
for k, c in a.items():
    if k in b and b[k]["candidate"] != c["candidate"]:
        print(f"{k[0][:10]} {k[1]:32s} {c['candidate']:28s} {c['ms']:.4f} -> {b[k]['candidate']:28s} {b[k]['ms']:.4f}")
PY
rm -f "$OUT"/profile-sd15-off-1.json "$OUT"/profile-sd15-on-1.json
source scripts/device/cuda-env.sh >/dev/null 2>&1
for p in fp16 fp32; do
  # the call's 10 minutes: the fp32 table (unchanged by the knobs) only where it still fits
  [ $p = fp32 ] && [ $SECONDS -gt 330 ] && { echo "skipped the fp32 table (${SECONDS} s)"; continue; }
  if [ $p = fp16 ]; then knobs=("${ON[@]}"); else knobs=(); fi
  env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/cache40c-bench timeout 280 ./build/default/app/sdgen --bench-conv2d --precision $p \
    --reference cudnn --json "$OUT/bench-conv2d-$p.json" > "$OUT/bench-conv2d-$p.txt" 2>&1; echo "bench $p rc=$?"
  grep -iE "geomean|geometric" "$OUT/bench-conv2d-$p.txt" | tail -2
done
python3 - "$OUT/bench-conv2d-fp16.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("fp16 geomean ours/cuDNN", d.get("geomean_ratio_vs_cudnn_best"))
best = {}
for r in d["rows"]:
    if r.get("error") or "ratio_vs_cudnn" not in r: continue
    if r["layer"] not in best or r["median_ms"] < best[r["layer"]]["median_ms"]: best[r["layer"]] = r
for l, r in best.items():
    if r["ratio_vs_cudnn"] > 1.5:
        print(f"{l:20s} {r['algo']:8s} {r['tile'][:36]:36s} {r['median_ms']:.4f} ratio {r['ratio_vs_cudnn']:.2f}")
PY
