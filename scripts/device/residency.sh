#!/usr/bin/env bash
# Issue 18 on the GPU machine (carry .gl .carry .whl; scripts/device/pack.sh first, sdgen is all it needs):
# SD 1.5 with random weights as an fp16 diffusers folder and single file, then bench/residency.py: sdgen's load
# time (warm), peak memory (process and nvidia-smi) and cold compile beside diffusers', in one call (~4 min).
#   run: bash scripts/device/residency.sh [residency.py options]   -> $OUT/h100-residency.json (+ -details.json)
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
out=${OUT:-/tmp/residency-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader || true
python3 bench/residency.py --sdgen ./build/default/app/sdgen --work /tmp/residency --out "$out/h100-residency.json" \
  "$@" 2>&1 | tee "$out/residency.log"
exit "${PIPESTATUS[0]}"
