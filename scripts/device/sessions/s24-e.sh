#!/usr/bin/env bash
# Session 24, call E (carry .gl .carry .whl; `scripts/device/slim-tree.sh on` for the call), after
# `scripts/device/pack.sh build/default/tests/ops/ops_tests`: call D's A/B again with three rounds and a cap on the
# pixels held per invocation (SDGEN_GROUP_NORM_HELD 0 / 32 / 64 alternating; call D's held round ran every small
# kernel ~10 % slower, the layer norms it does not touch included), and the norm tests (both paths against float64)
# with validation.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests --gtest_filter='*GroupNormRows*:*LayerNormRows*' > "$OUT/norm-tests.log" 2>&1
echo "norm tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/norm-tests.log" | tr '\n' ' ')"; grep -E "max \|gpu|Failure|element" "$OUT/norm-tests.log" | head -6
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for r in 1 2 3; do for v in 0 32 64; do
  SDGEN_GROUP_NORM_HELD=$v ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/prof-held$v-r$r.json" > /tmp/prof.txt 2>&1
  echo "held=$v round $r rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'norm|total' | tr -s ' ' | tr '\n' ' ')"
done; done
python3 bench/profile_compare.py --graph unet --top 30 \
  loop="$OUT/prof-held0-r1.json,$OUT/prof-held0-r2.json,$OUT/prof-held0-r3.json" \
  held32="$OUT/prof-held32-r1.json,$OUT/prof-held32-r2.json,$OUT/prof-held32-r3.json" \
  held64="$OUT/prof-held64-r1.json,$OUT/prof-held64-r2.json,$OUT/prof-held64-r3.json" 2>&1 | tee "$OUT/compare.txt" | grep -E "norm|loop|held"
