#!/usr/bin/env bash
# Issue 21 on the GPU machine (carry .gl .carry .whl; scripts/device/pack.sh build/default/bench/vae_decode_bench
# first): SD 1.5 with random weights, a 2048x2048 fp16 VAE decode tiled (must peak within 3 GB) beside untiled
# decodes, and one whole tiled 2048x2048 generation (bench/vae_tiling.py).
#   run: bash scripts/device/vae-tiling.sh [vae_tiling.py options]   -> $OUT/h100-vae-tiling.json
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
out=${OUT:-/tmp/vae-tiling-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader || true
python3 bench/vae_tiling.py --bench ./build/default/bench/vae_decode_bench --sdgen ./build/default/app/sdgen \
  --work /tmp/vaetile --out "$out/h100-vae-tiling.json" "$@" 2>&1 | tee "$out/vae-tiling.log"
exit "${PIPESTATUS[0]}"
