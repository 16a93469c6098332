#!/usr/bin/env bash
# Session 38, call B (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Call A's winner alone,
# in SDXL's fp16 1024^2 UNet step: the tail split of the 32^2 GEGLU projection (SDGEN_TAIL_SPLIT=1) off / on / off /
# on, one process each, beside diffusers' eager and CUDA-graph step in the same call (make_sdxl_random.py), parity
# against torch fp32 for each. (s37-b.sh's six runs did not fit the session's last device minutes.)
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
w=/tmp/sdxl; mkdir -p "$w"; export SDGEN_CACHE_DIR=/tmp/sdxl-cache
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "torch UNet step|CUDA graph|eager" "$OUT/make.log" | tail -4
for r in off-1 on-1 off-2 on-2; do
  t=1; [ "${r%-*}" = off ] && t=0
  SDGEN_TAIL_SPLIT=$t timeout 110 ./build/default/tests/model_check/sdgen_model_check \
    --refs "$w/refs/sdxl_random" --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$r.txt" 2>&1
  echo "$r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$r.txt" | tr -s ' ' | sed 's/^/    /' | head -6
done
