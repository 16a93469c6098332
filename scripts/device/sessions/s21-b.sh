#!/usr/bin/env bash
# Session 21, call B (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/app/sdgen
# build/default/tests/ops/ops_tests` and `slim-tree.sh on`: group norms in one launch (ops::groupNormRows), its
# test with validation, then `sdgen --profile-conv` of SD 1.5 fp16 with SDGEN_GROUP_NORM_MAX=0 (statistics launch +
# staging, as before) and 2^30 (one launch for every group norm the kernel takes), twice, alternating, with the
# JSON reports: the per-layer times give the bound of the rule (docs/perf.md, session 21).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*GroupNorm*:*LayerNormRows*' > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops.log" | tr '\n' ' ')"
grep -E "FAILED  \]" "$OUT/ops.log" | head -5
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > /dev/null 2>&1; echo "tune rc=$?"
for round in 1 2; do
  for v in 0 1073741824; do
    SDGEN_GROUP_NORM_MAX=$v ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 \
      --json "$OUT/profile-$v-$round.json" > "$OUT/profile-$v-$round.txt" 2>&1
    echo "group norm max $v, round $round rc=$?:" \
      "unet $(grep -A6 'totals of unet' "$OUT/profile-$v-$round.txt" | grep -E 'conv|linear|norm|total' | tr -s ' ' | tr '\n' '|')" \
      "vae $(grep -A6 'totals of vae' "$OUT/profile-$v-$round.txt" | grep -E 'conv|norm|total' | tr -s ' ' | tr '\n' '|')"
  done
done
