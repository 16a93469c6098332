#!/usr/bin/env bash
# Session 37 (prepared for the next session), call E (issue 17's results file; carry .gl .carry after
# `scripts/device/pack.sh build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`).
# Usage: s37-e.sh [KNOBS...] -- the environment assignments call D found winning (e.g. SDGEN_CONV_DIRECT_COOP=1),
# applied to the fp16 table. The SD 1.5 conv table in fp16 beside cuDNN (best algorithm per row; replaces
# docs/perf-data/h200-bench-conv2d-fp16.json, whose VAE conv_out row predates session 36's fp16 halo), its
# geometric mean and the rows over 2x.
set -uo pipefail
for kv in "$@"; do export "$kv"; done
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
env | grep -E '^SDGEN_' | sort
timeout 560 ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn \
  --json "$OUT/bench_conv2d_fp16.json" > "$OUT/bench_conv2d_fp16.txt" 2>&1
echo "bench rc=$?"
grep -E "geometric mean" "$OUT/bench_conv2d_fp16.txt"
python3 - "$OUT/bench_conv2d_fp16.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
best = {}
for r in d["rows"]:
    if r.get("error"): continue
    k = r["layer"]
    if k not in best or r["ratio_vs_cudnn"] < best[k]["ratio_vs_cudnn"]: best[k] = r
print("geomean (best per row):", d.get("geomean_ratio_vs_cudnn_best"))
print("rows over 2x:", [(k, round(r["ratio_vs_cudnn"], 2), r["algo"], round(r["median_ms"], 4)) for k, r in best.items() if r["ratio_vs_cudnn"] > 2])
print("conv_out rows:", [(k, round(r["median_ms"], 4), r["algo"], round(r["ratio_vs_cudnn"], 2)) for k, r in best.items() if "conv_out" in k])
PY
