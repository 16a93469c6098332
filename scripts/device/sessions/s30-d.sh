#!/usr/bin/env bash
# Session 30, call D (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Split-K partials in
# fp16 by default where every output of the GEMM is fp16 (SDGEN_SPLIT_PARTIALS=f32: fp32, as before). The linear
# and conv tensor-core tests with validation; issue 19's end-to-end bench; the step's GPU time both ways (~8 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 220 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopMatrixKernelWhereSupported*:*MatmulWithHalfB*:GemmSplitK.*:*CoopWhereSupported*:*CoopBigTileSplitK*:*CoopUpsample*' \
  > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|split-K partials" "$OUT/tests.log" | head -12
rm -rf /tmp/e2e
timeout 300 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
tail -12 "$OUT/e2e.log"
for v in base-r1 new-r1 base-r2 new-r2; do
  case ${v%-r*} in base) e="SDGEN_SPLIT_PARTIALS=f32";; new) e="SDGEN_SPLIT_PARTIALS=";; esac
  env $e timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
    --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step GPU' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ')"
  grep -E "unet +rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /'
done
rm -f "$OUT"/check-*-r2.txt
