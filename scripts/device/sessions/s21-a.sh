#!/usr/bin/env bash
# Session 21, call A (issues 17, 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/app/sdgen
# build/default/tests/ops/ops_tests` and `slim-tree.sh on`: the direct convolution split over its input channels
# (session 20, built after the device time) with validation, then `sdgen --profile-conv` of SD 1.5 fp16 from a
# fresh autotune cache (does the tuner take `direct split P` for conv_out?) and again from that cache, with the
# JSON reports (every launch's time: the plan for the group-norm launches) and the tune cache's candidate times.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
[ -n "${SKIP_TESTS:-}" ] || {
F='*DirectSplit*:*LayerNormRows*:*ConvTest.*Coop*:*ConvTest.Direct*:ConvTuneTest.*'
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter="$F" > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops.log" | tr '\n' ' ')"
grep -E "FAILED  \]" "$OUT/ops.log" | head -5
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
grep -i "split" "$OUT/ops.log" | grep -i "error" | head -6
}
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
export SDGEN_CACHE_DIR=$OUT/cache
for run in tune cached; do
  ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 --json "$OUT/profile-$run.json" \
    > "$OUT/profile-$run.txt" 2>&1
  echo "profile $run rc=$?: $(grep 'conv autotune' "$OUT/profile-$run.txt")"
  grep -A6 'totals of' "$OUT/profile-$run.txt" | grep -E 'totals|conv|linear|attention|norm|total' | tr -s ' '
  grep -A3 '^conv_out' "$OUT/profile-$run.txt" | tr -s ' '
done
cp "$OUT"/cache/conv-tune-v1.json "$OUT/conv-tune.json" 2>/dev/null
rm -rf "$OUT/cache"
