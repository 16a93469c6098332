#!/usr/bin/env bash
# Ran with the rule of call B (8 subgroups from 1024 query rows, 64-key blocks up to D 128); SDGEN_FLASH_SUBGROUPS=4 is kept.
# Session 32, call C (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/model_check/sdgen_model_check`
# and `scripts/device/slim-tree.sh on`). Issue 22: the full-size SDXL architecture with random weights
# (tests/reference/make_sdxl_random.py: torch references, diffusers' 1024² step eager and as a CUDA graph), then
# sdgen's fp16 1024² step and parity with the session's attention rule (8 subgroups from 1024 query rows)
# alternating with the old tile (SDGEN_FLASH_SUBGROUPS=4).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
w=/tmp/sdxl; mkdir -p "$w"
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -iE "step|graph|eager" "$OUT/make.log" | tail -6
for v in 8-r1 4-r1 8-r2 4-r2; do
  SDGEN_FLASH_SUBGROUPS=${v:0:1} timeout 200 ./build/default/tests/model_check/sdgen_model_check --refs "$w/refs/sdxl_random" \
    --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "unet rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /' | head -2
done
