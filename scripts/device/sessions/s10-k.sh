#!/usr/bin/env bash
# Session 10, call K: the convolution and autotune tests on the H100 with validation (EDGE 0 reaches every coop conv).
set -uo pipefail
source scripts/device/vulkan-env.sh
export SDGEN_CACHE_DIR=/tmp/cachek
SDGEN_VALIDATION=1 timeout 420 ./build/default/tests/ops/ops_tests --gtest_filter='Conv/ConvTest.*:ConvTuneTest.*:ConvCandidates.*:Linear/LinearTest.*' > $OUT/ops_conv.log 2>&1
echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|validation" $OUT/ops_conv.log | head -20; grep -c "^\[       OK" $OUT/ops_conv.log
