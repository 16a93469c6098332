#!/usr/bin/env bash
# Session 23, call I, carry .gl .carry, after `scripts/device/pack.sh build/default/bench/mma_peak_bench
# build/default/bench/linear_bench`: call H found the staged words, not the barriers, to be the slice round trip's
# cost (the L1/shared bandwidth they share with the fragment loads). Larger warp and workgroup tiles move fewer
# bytes per MMA: 8 subgroups of 64x64 (4 x 4 fragments) staging a 256x128 tile (6 words per invocation per
# 32-deep slice) in the bench, then the real GEMM on 4096^3 with that tile and the driver's register counts.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 200 ./build/default/bench/mma_peak_bench --rounds 20 \
  4,2,f32,l2 4,4,f32,l1,8,2,1,2 4,4,f32,l1,8,2,6,2 4,4,f32,l2,8,2,6,2 4,4,f32,l2,4,2,8,2 4,2,f32,l2,8,2,3,2 \
  2>&1 | grep -v "^ \|^device"
SDGEN_PIPELINE_STATS=1 timeout 200 ./build/default/bench/linear_bench scripts/device/sessions/s23-f-shapes.json --rounds 10 \
  --only "square 4096" coop:128,128,32,4,2 coop:256,128,32,4,4 coop:256,128,32,4,4,O coop:128,256,32,4,4 coop:128,128,32,4,4 \
  > /tmp/lb.txt 2>&1; grep -v "pipeline stats" /tmp/lb.txt | cut -c1-140
grep "pipeline stats" /tmp/lb.txt | grep -v "split\|stats\b" | cut -c1-220 | sort -u | head -8
