#!/usr/bin/env bash
# Session 33, call A (issue 22), carry .gl .carry, after `scripts/device/pack.sh build/default/bench/linear_bench`:
# split-K of the 128x128 tile in 2-8 parts (and 64x64 in 2) on SDXL's linear shapes that are not GEGLU: do the
# 32^2 level's 160-tile problems (2048 x 1280 outputs: 1.2 tiles per SM) gain from balanced parts?
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
V="auto coop:128,128,32,4,2 coop:128,128,32,4,2,s2 coop:128,128,32,4,2,s3 coop:128,128,32,4,2,s4
   coop:128,128,32,4,2,s5 coop:128,128,32,4,2,s6 coop:128,128,32,4,2,s8 coop:64,64,32,2,2,s2 coop:64,64,32,2,2,s3"
timeout 400 ./build/default/bench/linear_bench scripts/device/sessions/s33-sdxl-split-shapes.json --rounds 10 \
  --json "$OUT/split.json" $V > "$OUT/split.txt" 2>&1; echo "split rc=$?"
cut -c1-150 "$OUT/split.txt"
