#!/usr/bin/env bash
# Session 20, call C (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/tests/ops/ops_tests`
# and `slim-tree.sh on`: two launch-count changes, each switchable for the A/B — split-K GEMMs summed by the
# tile's last part (SDGEN_SPLIT_SUM=launch: the second launch as before) and the layer norms of the UNet's
# transformer blocks in one launch (SDGEN_LAYER_NORM=stats: statistics launch + staging as before). Their tests
# with validation (both split-K paths), then `sdgen --profile-conv` of SD 1.5 fp16 in the four combinations,
# twice, alternating (the autotune cache of the first run for all). The in-kernel sum was rejected (slower) and
# removed with SDGEN_SPLIT_SUM afterwards, so this script needs the tree of that call (docs/perf.md, session 20).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
F='*CoopMatrixKernelWhereSupported*:ConvTest*Coop*:GemmSplitK.*:*LayerNormRows*:*MatmulWithHalfB*:LinearTest.*Split*'
for mode in "" launch; do
  SDGEN_SPLIT_SUM=$mode SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter="$F" > "$OUT/ops-${mode:-kernel}.log" 2>&1
  echo "ops_tests split sum '${mode:-kernel}' rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops-${mode:-kernel}.log" | tr '\n' ' ')"
  grep -E "FAILED  \]" "$OUT/ops-${mode:-kernel}.log" | head -5
  grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops-${mode:-kernel}.log"
  grep -E "split" "$OUT/ops-${mode:-kernel}.log" | grep "relative error" | head -4
done
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > /dev/null 2>&1; echo "tune rc=$?"
for round in 1 2; do
  for v in "launch stats" "kernel stats" "launch rows" "kernel rows"; do
    set -- $v
    SDGEN_SPLIT_SUM=$1 SDGEN_LAYER_NORM=$2 ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 \
      > "$OUT/profile-$1-$2-$round.txt" 2>&1
    echo "split sum $1, layer norm $2, round $round rc=$?:" \
      "unet $(grep -A6 'totals of unet' "$OUT/profile-$1-$2-$round.txt" | grep -E 'linear|norm|total' | tr -s ' ' | tr '\n' '|')" \
      "vae $(grep -A6 'totals of vae' "$OUT/profile-$1-$2-$round.txt" | grep -E 'total' | tr -s ' ')" \
      "text $(grep -A6 'totals of text' "$OUT/profile-$1-$2-$round.txt" | grep -E 'total' | tr -s ' ')"
  done
done
