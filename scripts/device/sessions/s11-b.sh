#!/usr/bin/env bash
# Session 11, call B: coop-winograd with V made in fp16 arithmetic: its test, then the four VAE rows over 2x
# cuDNN, coop-winograd beside coop (same run).
set -uo pipefail
source scripts/device/vulkan-env.sh
export SDGEN_CACHE_DIR=/tmp/cacheb
SDGEN_VALIDATION=1 timeout 120 ./build/default/tests/ops/ops_tests --gtest_filter='Conv/ConvTest.CoopWinograd*' > $OUT/ops_conv.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|alidation|max relative" $OUT/ops_conv.log | head -8
for s in 1,512,512,256,256,3,1 1,256,256,512,512,3,1 1,512,256,256,256,3,1 1,256,128,512,512,3,1 1,512,512,128,128,3,1; do
  for a in coop-winograd coop; do
    timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo $a --shape $s 2>&1 | grep -E "fp16 (coop|coop-winograd) " | cut -c1-120
  done
done
