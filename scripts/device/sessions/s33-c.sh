#!/usr/bin/env bash
# Session 33, call C (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/model_check/sdgen_model_check`
# and `scripts/device/slim-tree.sh on`). SDXL's fp16 1024^2 UNet step with the wave-balanced split-K rule off, on,
# off (SDGEN_WAVE_SPLIT; one process each, one conv autotune cache: the first run tunes, with the split-3 candidate),
# beside diffusers' eager and CUDA-graph step (make_sdxl_random.py), and parity against torch fp32.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
w=/tmp/sdxl; mkdir -p "$w"
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "torch UNet step|CUDA graph|eager" "$OUT/make.log" | tail -4
for r in off-1 on-1 off-2; do
  v=1; [ "${r%-*}" = off ] && v=0
  SDGEN_WAVE_SPLIT=$v timeout 170 ./build/default/tests/model_check/sdgen_model_check --refs "$w/refs/sdxl_random" \
    --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$r.txt" 2>&1
  echo "$r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$r.txt" | tr -s ' ' | sed 's/^/    /' | head -6
done
