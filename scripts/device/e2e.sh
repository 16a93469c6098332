#!/usr/bin/env bash
# Issue 19 on the GPU machine (carry .gl .carry .whl; scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check first): SD 1.5 with random weights, then bench/e2e.py —
# sdgen's UNet step, VAE decode, text encoder, 20-step 512² image, launches and host time per step beside
# diffusers' (eager, CUDA graph) in one call (~5 min).
#   run: bash scripts/device/e2e.sh [e2e.py options]   -> $OUT/h100-e2e.json (+ -details.json), $OUT/e2e.log
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
out=${OUT:-/tmp/e2e-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader || true
python3 bench/e2e.py --sdgen ./build/default/app/sdgen \
  --model-check ./build/default/tests/model_check/sdgen_model_check --work /tmp/e2e --out "$out/h100-e2e.json" \
  "$@" 2>&1 | tee "$out/e2e.log"
exit "${PIPESTATUS[0]}"
