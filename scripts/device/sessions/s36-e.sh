#!/usr/bin/env bash
# Session 36, call E (issue 22; carry .gl .carry after `scripts/device/pack.sh build/default/bench/linear_bench` and
# `scripts/device/slim-tree.sh on`). SDXL's output projections, cross-attention queries and proj_in (K 1280 at 32^2,
# K 640 at 64^2; scripts/device/sessions/s36-e-shapes.json) on the fp16-accumulator tiles, split and unsplit; and
# the 32^2 ff out with the split fp16-accumulator tile off / on with --interleave (another kernel between copies).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
L=./build/default/bench/linear_bench
timeout 240 $L scripts/device/sessions/s36-e-shapes.json --rounds 10 auto coop:256,256,32,8,4,H,s2,O \
  coop:256,256,32,8,4,H,s3,O coop:256,128,32,8,2,H,O coop:256,128,32,8,2,H,s2,O coop:128,256,32,4,4,H,O \
  coop:128,256,32,4,4,H,s2,O > "$OUT/projections.txt" 2>&1; echo "projections rc=$?"
cut -c1-200 "$OUT/projections.txt" | grep -E "^(32x32|64x64|shape)"
for r in off on; do
  h=1; [ $r = off ] && h=0
  for il in "" --interleave; do
    SDGEN_SPLIT_HALF_TILE=$h timeout 60 $L bench/data/sdxl_linear_shapes.json --rounds 10 --only "32x32 ff out" $il auto \
      > "$OUT/ffout-$r$il.txt" 2>&1
    echo "ff out $r ${il:-plain}: $(grep -E '^32x32 ff out' "$OUT/ffout-$r$il.txt" | tr -s ' ' | cut -c1-160)"
  done
done
