#!/usr/bin/env bash
# Session 10, call C: fp16 accumulation in chunks (ACC 3) on the 256x256 tile through spirv-opt: correctness of
# every coop tile (validation on) and 4096^3 with several flush intervals.
set -uo pipefail
out=$OUT
source scripts/device/vulkan-env.sh
export SDGEN_CACHE_DIR=/tmp/cachec
SDGEN_VALIDATION=1 timeout 300 ./build/default/tests/ops/ops_tests --gtest_filter='*CoopMatrixKernelWhereSupported*:GemmCoopRule.*' > $out/ops.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|validation" $out/ops.log | head; grep -E "flush" $out/ops.log | grep "f16" | head -40 | cut -c1-150
V="auto coop:256,256,32,8,4,H,O coop:256,256,32,8,4,H,F2048,O coop:256,256,32,8,4,H,F1024,O coop:256,256,32,8,4,H,F512,O"
SDGEN_PIPELINE_STATS=1 timeout 200 ./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --only "square 4096" --rounds 20 --reps 5 --json $out/lin.json $V > $out/lin.log 2>&1
echo "bench rc=$?"; grep -vE "^ " $out/lin.log | grep -v "pipeline stats" | cut -c1-200
grep "pipeline stats" $out/lin.log | sed -E 's/.*Register Count=([0-9]+).*Binary Size=([0-9]+).*Shared Memory Size=([0-9]+)/regs \1 bin \2 smem \3/'
