#!/usr/bin/env bash
# Session 30, call B (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/models/models_tests build/default/tests/model_check/sdgen_model_check` and
# `scripts/device/slim-tree.sh on`). A transformer's proj_in / out projections with the layer norm that reads them
# (nn::Builder::linearThenLayerNorm): where the GEMM splits K, the norm's launch sums the partials, bias and
# residual and stores the result (SDGEN_SPLIT_SUM_NORM=0: the split-K sum launch, then the norm, as before).
# Its tests with validation; the step's GPU time both ways, alternating; issue 19's end-to-end bench (~7 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/models/models_tests --gtest_filter='*LinearThenLayerNorm*' \
  > "$OUT/tests.log" 2>&1; echo "models tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests --gtest_filter='*LayerNormRows*:*GemmSplit*' \
  >> "$OUT/tests.log" 2>&1; echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|split-K sum launch" "$OUT/tests.log" | head -12
rm -rf /tmp/e2e
timeout 300 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
tail -12 "$OUT/e2e.log"
for v in base-r1 new-r1 base-r2 new-r2 base-r3 new-r3; do
  case ${v%-r*} in base) e="SDGEN_SPLIT_SUM_NORM=0";; new) e="SDGEN_SPLIT_SUM_NORM=1";; esac
  env $e timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
    --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ')"
done
grep -E "unet|vae|max" "$OUT/check-new-r1.txt" | head -12
rm -f "$OUT"/check-*-r2.txt "$OUT"/check-*-r3.txt
