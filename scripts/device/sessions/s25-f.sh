#!/usr/bin/env bash
# Session 25, call F (carry .gl .carry .whl; after `scripts/device/pack.sh build/default/tests/vulkan_tests
# build/default/tests/ops/ops_tests build/default/tests/model_check/sdgen_model_check`): the parameter block's
# first 60 words pushed as push constants and read from there (engine/pipeline.h pushParamWords, shaders/sdgen.slang
# paramU32; call E: a GEMM epilogue that re-reads its sink's parameters from memory before every store wrote at
# ~1 TB/s). Tests with validation; sdgen --profile-conv with every word from memory (SDGEN_PUSH_PARAM_WORDS=0)
# against the default, alternating; then issue 19's end-to-end bench (scripts/device/e2e.sh) on the new default.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 60 ./build/default/tests/vulkan_tests --gtest_filter='CommandSequence*' > "$OUT/tests.log" 2>&1
echo "vulkan tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tr '\n' ' ')"
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopMatrixKernelWhereSupported*:*CoopWhereSupported*:*CoopBigTileSplitK*:*FusedLayerNorm*:*MatmulWithHalfB*:*TensorCoreKernel*:*AccumulatorSoftmax*:*GroupNormRows*' \
  >> "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|vulkan validation" "$OUT/tests.log" | head -6
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for r in 1 2; do for w in 0 60; do
  SDGEN_PUSH_PARAM_WORDS=$w SDGEN_CACHE_DIR=/tmp/cache-push$w ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-push$w-r$r.json" > /tmp/prof.txt 2>&1
  echo "push words $w round $r rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'conv|linear|atten|norm|total' | tr -s ' ' | tr '\n' ' ')"
done; done
python3 bench/profile_compare.py --graph unet --top 12 memory="$OUT/prof-push0-r1.json,$OUT/prof-push0-r2.json" \
  pushed="$OUT/prof-push60-r1.json,$OUT/prof-push60-r2.json" > "$OUT/compare.txt" 2>&1
grep -E "^  (memory|pushed)|^==" "$OUT/compare.txt" | head -12; sed -n '/launches (best round)/,+14p' "$OUT/compare.txt" | head -15
rm -f "$OUT"/prof-*.json
timeout 330 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
tail -25 "$OUT/e2e.log"
