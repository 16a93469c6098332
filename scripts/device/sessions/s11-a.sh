#!/usr/bin/env bash
# Session 11, call A: the coop-winograd conv (Winograd F(2,3) on tensor cores) against float64 on the H100 with
# validation, then issue 17's fp16 conv table with cuDNN in the same run (every algorithm, coop-winograd included).
set -uo pipefail
source scripts/device/vulkan-env.sh
export SDGEN_CACHE_DIR=/tmp/cachea
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.Coop*:GemmSplitK.*:ConvCandidates.*:ConvWinogradMath.*' > $OUT/ops_conv.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|alidation|max relative" $OUT/ops_conv.log | head -20
source scripts/device/cuda-env.sh
timeout 360 ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn \
  --json $OUT/bench_conv2d_fp16.json > $OUT/bench_conv2d_fp16.txt 2>&1; echo "bench rc=$?"
grep -iE "geometric" $OUT/bench_conv2d_fp16.txt | head -3
grep -E "coop-winograd" $OUT/bench_conv2d_fp16.txt | cut -c1-170 | head -30
