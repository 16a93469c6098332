#!/usr/bin/env bash
# Session 42, call B (carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`).
# SD 1.5's fp16 512^2 step with session 41's default of the layer norms written beside the products
# (nn::Builder::linearThenLayerNorm; measured on SDXL only: -1.1 to -1.4 ms) against SDGEN_SPLIT_SUM_NORM=0 (the
# norms as their own nodes, the consumers' fused-norm staging where it applied before). SD 1.5's 64^2 products are
# unsplit, so there the node's norm is one ops::layerNormRows launch where a statistics launch and a norm fused into
# the next GEMM's staging ran before: the sign is unknown. Each variant a process with a fresh tuning cache
# (sdgen_model_check tunes since session 41), interleaved, three rounds, beside the torch step of
# make_sd15_random.py; then a --profile-conv of each. If the default loses here, make the node conditional (split
# products only) rather than reverting SDXL's gain.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > "$OUT/make15.log" 2>&1 || { tail -5 "$OUT/make15.log"; exit 1; }
grep -E "UNet step|CUDA graph" "$OUT/make15.log" | tail -2
for round in 1 2 3; do
  for v in default sn0; do
    [ $SECONDS -gt 420 ] && { echo "skipped $v-$round (${SECONDS} s)"; continue; }
    knobs=(); [ $v = sn0 ] && knobs=(SDGEN_SPLIT_SUM_NORM=0)
    rm -rf /tmp/c42b; env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/c42b timeout 100 ./build/default/tests/model_check/sdgen_model_check \
      --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "/tmp/c-$v-$round.txt" 2>&1
    echo "$v-$round rc=$?: $(grep -E 'fp16 +unet step (GPU|.*launches)|fp16 +unet +rel' "/tmp/c-$v-$round.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-330)"
  done
done
for v in default sn0; do
  [ $SECONDS -gt 520 ] && { echo "skipped profile $v (${SECONDS} s)"; continue; }
  knobs=(); [ $v = sn0 ] && knobs=(SDGEN_SPLIT_SUM_NORM=0)
  rm -rf /tmp/c42b; env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/c42b timeout 60 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/profile-sd15-$v.json" > /dev/null 2>&1
  python3 -c "
import json; d = json.load(open('$OUT/profile-sd15-$v.json')); g = d['graphs'][0]
print('$v', g['name'], round(g['total_ms'], 3), g['launches'], {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
done
for f in /tmp/c-*-[123].txt; do echo "== $f"; cat "$f"; done > "$OUT/checks.txt" 2>/dev/null
