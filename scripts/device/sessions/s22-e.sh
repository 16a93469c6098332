#!/usr/bin/env bash
# Session 22, call E (issues 17, 19), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`:
# a residual add loaded into the coop GEMM's accumulators before its first slice (header words 26-27) instead
# of read in its epilogue, wherever every tile is whole. The coop tests with validation, sdgen_model_check fp16,
# then `sdgen --profile-conv` of SD 1.5 fp16 with SDGEN_GEMM_RESIDUAL=0 (the add in the sink) and 1, twice,
# alternating.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
F='*Coop*:GemmSplitK.*:LinearTest.*:*Geglu*:*Upsample*'
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter="$F" > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops.log" | tr '\n' ' ')"
grep -E "FAILED  \]" "$OUT/ops.log" | head -5
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/tests/model_check/sdgen_model_check --refs /tmp/sd15/refs/sd15_random --model $m --precision fp16 \
  > "$OUT/model-check.log" 2>&1; echo "model check rc=$?"; grep -E "fp16" "$OUT/model-check.log" | head -8
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > /dev/null 2>&1; echo "tune rc=$?"
for round in 1 2; do
  for v in 0 1; do
    SDGEN_GEMM_RESIDUAL=$v ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 \
      --json "$OUT/profile-residual$v-$round.json" > /dev/null 2>&1
    echo "residual preload $v round $round rc=$?: $(python3 -c "
import json; d=json.load(open('$OUT/profile-residual$v-$round.json'))
print(' | '.join(g['name'].split()[0] + ' %.3f (conv %.3f linear %.3f)' % (g['total_ms'], g['by_type']['conv']['ms'], g['by_type']['linear']['ms']) for g in d['graphs']))")"
  done
done
