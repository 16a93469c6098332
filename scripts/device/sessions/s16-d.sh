#!/usr/bin/env bash
# Session 16, call D (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check build/default/tests/ops/ops_tests` and `slim-tree.sh on`:
# the end-to-end table with -v's decode split (decoder run + readback, post-process), then every ops test with
# validation (the coop GEMM's B batch stride touched every tensor-core kernel).
set -uo pipefail
bash scripts/device/e2e.sh > "$OUT/e2e-run.txt" 2>&1; echo "e2e rc=$?"
tail -9 "$OUT/e2e-run.txt"; grep -E "text encode|decode  " /tmp/e2e/sdgen-images.stderr | head -4
cp /tmp/e2e/sdgen-images.stderr "$OUT/sdgen-images.stderr" 2>/dev/null
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 timeout 300 ./build/default/tests/ops/ops_tests > "$OUT/ops_tests.log" 2>&1; echo "ops_tests rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|tests ran" "$OUT/ops_tests.log" | head -10
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops_tests.log"
