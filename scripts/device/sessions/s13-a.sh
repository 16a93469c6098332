#!/usr/bin/env bash
# Session 13, call A (issue 27) on nvidia-h200-x2, carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/app/sdgen` and `scripts/device/slim-tree.sh on`: sdgen serve on SD 1.5 (random weights, fp16,
# 512², 20 steps) with --devices 0 and --devices 0,1; 20 requests per queue depth, depths 1 and 8 (the device
# time left this session was ~5 min, so one short configuration pair).
set -uo pipefail
nvidia-smi -L
SERVE_BENCH_NAME=h200x2-serve bash scripts/device/serve-bench.sh --requests 20 --depths 1,8 --devices-list "0;0,1"
status=$?
source scripts/device/vulkan-env.sh  # the loader and the bundle's libraries (serve-bench.sh sources it in its shell)
./build/default/app/sdgen --list-devices > "$OUT/list-devices.txt" 2>&1
exit "$status"
