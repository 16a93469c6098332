#!/usr/bin/env bash
# Session 24, call H (carry .gl .carry .whl; `scripts/device/slim-tree.sh on` for the call), after
# `scripts/device/pack.sh build/default/tests/ops/ops_tests`: the one-launch group norm holding fp16 copies of its
# pixels where x's values are fp16 (half the registers), so that the 64^2 level's 41 pixels per invocation fit:
# SDGEN_GROUP_NORM_HELD 0 (loop) / 64 (fp16 copies) / 64 with SDGEN_GROUP_NORM_HELD_HALF=0 (fp32 copies, call E's
# held64), two rounds alternating; the norm tests with validation first.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
SDGEN_VALIDATION=1 timeout 100 ./build/default/tests/ops/ops_tests --gtest_filter='*GroupNormRowsInOneLaunch*' > "$OUT/norm-tests.log" 2>&1
echo "norm tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/norm-tests.log" | tr '\n' ' ')"; grep -E "max \|gpu|Failure" "$OUT/norm-tests.log" | head -4
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for r in 1 2; do for v in loop half f32; do
  case $v in loop) e="SDGEN_GROUP_NORM_HELD=0";; half) e="SDGEN_GROUP_NORM_HELD=64";; f32) e="SDGEN_GROUP_NORM_HELD=64 SDGEN_GROUP_NORM_HELD_HALF=0";; esac
  env $e ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
    --json "$OUT/prof-$v-r$r.json" > /tmp/prof.txt 2>&1
  echo "$v round $r: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'norm|total' | tr -s ' ' | tr '\n' ' ')"
done; done
python3 bench/profile_compare.py --graph unet --top 24 loop="$OUT/prof-loop-r1.json,$OUT/prof-loop-r2.json" \
  half="$OUT/prof-half-r1.json,$OUT/prof-half-r2.json" f32="$OUT/prof-f32-r1.json,$OUT/prof-f32-r2.json" 2>&1 | \
  tee "$OUT/compare.txt" | grep -E "norm|loop|half|f32" | head -30
