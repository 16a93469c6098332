#!/usr/bin/env bash
# Session 11, call E: the tensor-core conv tests (coop, coop-winograd) after sharing their body (tensorCoreCase),
# on the H100 with validation.
set -uo pipefail
source scripts/device/vulkan-env.sh
export SDGEN_CACHE_DIR=/tmp/cachee
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests --gtest_filter='Conv/ConvTest.Coop*' > $OUT/ops_conv.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|alidation|max relative" $OUT/ops_conv.log | head -10
