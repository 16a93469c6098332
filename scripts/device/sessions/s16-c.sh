#!/usr/bin/env bash
# Session 16, call C (issues 17, 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `slim-tree.sh on`: the fixed 128x128 split-K conv test with
# validation, the end-to-end table (the decoded image written to host-visible memory; text and decode as
# medians per image) and the conv table beside cuDNN (results files).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*CoopBigTileSplitK*' > "$OUT/ops_tests.log" 2>&1
echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|Failure|validation\]" "$OUT/ops_tests.log" | head -5
bash scripts/device/e2e.sh > "$OUT/e2e-run.txt" 2>&1; echo "e2e rc=$?"
tail -9 "$OUT/e2e-run.txt"; grep -E "text encode|decode  " "$OUT/e2e.log" | head -4
bash scripts/device/bench-conv2d.sh > "$OUT/bench-conv2d-run.txt" 2>&1; echo "bench rc=$?"
grep -iE "geomean|geometric|64x64x512|512.*64" "$OUT/bench-conv2d-run.txt" | head -12
