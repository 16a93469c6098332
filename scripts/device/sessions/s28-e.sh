#!/usr/bin/env bash
# Session 28, call E (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests` and
# `scripts/device/slim-tree.sh on`): the linear tests with validation on the H200 now that layers of <= 8 rows take
# the few-row kernel on GPUs (OddShapes expects its tile there), but the long tensor-core tile sweep (~2 min).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 timeout 170 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Linear/LinearTest.*:GemmCoopRule.*:-*CoopMatrixKernelWhereSupported*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Validation" "$OUT/tests.log" | head -12
