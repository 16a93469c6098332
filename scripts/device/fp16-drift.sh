#!/usr/bin/env bash
# Issue 15 item 3 on the GPU machine (carry .gl .carry .whl; pack sdgen first): SD 1.5 with random weights, then
# tests/reference/fp16_drift.py: sdgen fp16/fp32 and diffusers fp16/fp32 images, same seeds, one call.
#   run: bash scripts/device/fp16-drift.sh [fp16_drift.py options]      -> $OUT/fp16_drift.json + PNGs
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
out=${OUT:-/tmp/drift}
[ -d /tmp/sd15/sd15-random ] || python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$out/make.log" 2>&1 \
  || { tail -5 "$out/make.log"; exit 1; }
python3 tests/reference/fp16_drift.py /tmp/sd15/sd15-random ./build/default/app/sdgen "$out" "$@"
