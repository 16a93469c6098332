#!/usr/bin/env bash
# Issue 26 on the GPU machine (carry .gl .carry .whl; scripts/device/pack.sh first, sdgen is all it needs):
# SD 1.5 with random weights as an fp16 diffusers folder, then bench/serve_bench.py: `sdgen serve` (fp16, 512^2,
# 20 steps) driven by concurrent loopback clients at queue depths 1, 4 and 16, with --devices 0 and --devices 0,0
# (two engines on one GPU). About 6 min on an H100 (estimated from ~50 ms a UNet step; a cold kernel compile of
# ~1 min included).
#   run: bash scripts/device/serve-bench.sh [serve_bench.py options]
#        -> $OUT/h100-serve-bench.json, $OUT/serve-bench.log, $OUT/serve-*.log (the servers' request logs)
# Issue 27 (two GPUs, nvidia-h200-x2): SERVE_BENCH_NAME=h200x2-serve bash scripts/device/serve-bench.sh --devices-list "0;0,1"
# (scripts/device/sessions/s13-a.sh: the same with 20 requests at depths 1 and 8, ~2.5 min of the call)
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
out=${OUT:-/tmp/serve-bench-out}
name=${SERVE_BENCH_NAME:-h100-serve-bench}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader || true
python3 bench/serve_bench.py --sdgen ./build/default/app/sdgen --model sd15-random --work /tmp/serve-bench \
  --size 512 --steps 20 --requests 24 --depths 1,4,16 --devices-list "0;0,0" --out "$out/$name.json" \
  "$@" 2>&1 | tee "$out/serve-bench.log"
status=${PIPESTATUS[0]}
cp /tmp/serve-bench/serve-*.log "$out/" 2>/dev/null || true
exit "$status"
