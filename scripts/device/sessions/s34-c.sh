#!/usr/bin/env bash
# Session 34, call C (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/model_check/sdgen_model_check`
# and `scripts/device/slim-tree.sh on`). SDXL's fp16 1024^2 UNet step with the one-wave 64x160 tile on / off / on
# (SDGEN_WAVE_TILE; one process each, one conv autotune cache: the first run tunes), beside diffusers' eager and
# CUDA-graph step (make_sdxl_random.py), parity against torch fp32; then the profile with the rule on.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
w=/tmp/sdxl; mkdir -p "$w"; export SDGEN_CACHE_DIR=/tmp/sdxl-cache
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "torch UNet step|CUDA graph|eager" "$OUT/make.log" | tail -4
for r in on-1 off-1 on-2; do
  v=1; [ "${r%-*}" = off ] && v=0
  SDGEN_WAVE_TILE=$v timeout 170 ./build/default/tests/model_check/sdgen_model_check --refs "$w/refs/sdxl_random" \
    --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$r.txt" 2>&1
  echo "$r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$r.txt" | tr -s ' ' | sed 's/^/    /' | head -6
done
timeout 120 ./build/default/app/sdgen --profile-conv -m "$w/models/sdxl-random" -W 1024 -H 1024 --precision fp16 \
  --json "$OUT/profile-sdxl.json" > "$OUT/profile-sdxl.txt" 2>&1; echo "profile rc=$?"
python3 - "$OUT" <<'PY'
import json, sys
g = json.load(open(f"{sys.argv[1]}/profile-sdxl.json"))["graphs"][0]
print(g["name"], round(g["total_ms"], 3), g["launches"], {k: round(v["ms"], 3) for k, v in g["by_type"].items()})
PY
