#!/usr/bin/env bash
# Session 25, call B (carry .gl .carry .whl), after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check`: split-K summed inside the GEMM by the last part of each tile
# (gemm_coop.slang SPLIT = S, gemmSplitFixup) against the second launch (SDGEN_SPLIT_FIXUP=0).
# (1) the split-K tests with validation (float64 references; the two paths bit for bit);
# (2) sdgen --profile-conv, three rounds alternating, each mode with its own autotune cache;
# (3) sdgen_model_check --precision fp16 with the new default.
# Runs on the tree with scripts/device/sessions/s25-bc-split-fixup-rejected.patch applied (rejected, not in main).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 240 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopMatrixKernelWhereSupported*:*CoopWhereSupported*:*CoopBigTileSplitK*:*SplitK*:*FusedLayerNorm*:*MatmulWithHalfB*' \
  > "$OUT/split-tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/split-tests.log" | tr '\n' ' ')"
grep -E "Failure|vulkan validation" "$OUT/split-tests.log" | head -8
grep -E "split" "$OUT/split-tests.log" | grep "relative error" | head -12
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for r in 1 2 3; do for v in 0 1; do
  SDGEN_SPLIT_FIXUP=$v SDGEN_CACHE_DIR=/tmp/cache-fix$v ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-fix$v-r$r.json" > "$OUT/prof-fix$v-r$r.txt" 2>&1
  echo "fixup=$v round $r rc=$?: $(grep -A6 'totals of unet' "$OUT/prof-fix$v-r$r.txt" | grep -E 'conv|linear|total' | tr -s ' ' | tr '\n' ' ')"
  grep -A6 'totals of vae' "$OUT/prof-fix$v-r$r.txt" | grep -E 'conv |total' | tr -s ' ' | tr '\n' ' '; echo
done; done
python3 bench/profile_compare.py --graph unet --top 25 \
  sum="$OUT/prof-fix0-r1.json,$OUT/prof-fix0-r2.json,$OUT/prof-fix0-r3.json" \
  fixup="$OUT/prof-fix1-r1.json,$OUT/prof-fix1-r2.json,$OUT/prof-fix1-r3.json" > "$OUT/compare.txt" 2>&1
head -40 "$OUT/compare.txt"
timeout 120 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/sd15/refs/sd15_random --model /tmp/sd15/sd15-random \
  --precision fp16 > "$OUT/model-check.txt" 2>&1; echo "model check rc=$?"; tail -8 "$OUT/model-check.txt"
