#!/usr/bin/env bash
# Session 18, call G (issues 17/19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `slim-tree.sh on`: the group-norm table (coop staging from
# 4 M elements, the direct conv_out) -- its tests with validation, one `--profile-conv`, then bench/e2e.py.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 SDGEN_CACHE_DIR=/tmp/cache-t ./build/default/tests/ops/ops_tests \
  --gtest_filter='*DirectReads*:*DirectFused*:*CoopWhere*:*ConvInputAffine*' > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|max relative error (coop|direct)" "$OUT/ops.log" | head -8
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json"; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -8 "$OUT/e2e.log"
./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 --precision fp16 > "$OUT/profile.txt" 2>&1
grep -A7 "totals of unet" "$OUT/profile.txt" | grep -E "conv|total"; grep -A7 "totals of vae" "$OUT/profile.txt" | grep -E "conv|norm|total"
grep "decoder conv_out" -A3 "$OUT/profile.txt" | cut -c1-150
