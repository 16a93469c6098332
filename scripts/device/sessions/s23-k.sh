#!/usr/bin/env bash
# Session 23, call K, carry .gl .carry, after `scripts/device/pack.sh build/default/bench/linear_bench`: the driver's
# register counts and spills (SDGEN_PIPELINE_STATS=1) of the coop GEMM's tiles on 4096^3 that call I timed (its
# statistics were dropped by a grep slip): where a larger fp32 tile's registers go.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_PIPELINE_STATS=1 timeout 200 ./build/default/bench/linear_bench scripts/device/sessions/s23-f-shapes.json --rounds 3 \
  --only "square 4096" coop:128,128,32,4,2 coop:64,64,32,2,2 coop:256,128,32,4,4 coop:256,128,32,4,4,O coop:128,128,32,4,4 \
  coop:128,256,32,4,4 coop:256,256,32,8,4,H,F2048,O > /tmp/lb.txt 2>&1
grep -v "pipeline stats" /tmp/lb.txt | cut -c1-140
grep "pipeline stats" /tmp/lb.txt | cut -c1-230 | sort -u
