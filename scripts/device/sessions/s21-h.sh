#!/usr/bin/env bash
# Session 21, call H (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/app/sdgen
# build/default/tests/ops/ops_tests` and `slim-tree.sh on`: the one-launch group norm reading quads everywhere
# C % 4 == 0, masked where a group's channels are not whole quads (the UNet's 64² level: groups of 10 channels),
# against single channels there (SDGEN_GROUP_NORM_QUADS=0, the rule of call G): its test with validation both
# ways, then `sdgen --profile-conv` of SD 1.5 fp16 twice, alternating, JSON per layer (docs/perf.md, session 21).
# Rejected and removed: apply scripts/device/sessions/s21-h-masked-quads.patch to f60f495 to run this again. Then the
# e2e (within 200 s; it failed in the call: a stale sdgen_model_check, pack after a full build).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
for q in 0 1; do
  SDGEN_GROUP_NORM_QUADS=$q SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*GroupNormRows*' > "$OUT/ops-$q.log" 2>&1
  echo "ops_tests quads $q rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops-$q.log" | tr '\n' ' ')"
  grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops-$q.log"
done
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > /dev/null 2>&1; echo "tune rc=$?"
for round in 1 2; do
  for q in 0 1; do
    SDGEN_GROUP_NORM_QUADS=$q ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 \
      --json "$OUT/profile-$q-$round.json" > /dev/null 2>&1
    echo "quads $q, round $round rc=$?: $(python3 -c "
import json; d=json.load(open('$OUT/profile-$q-$round.json'))
print(' '.join(g['name'].split()[0] + ' %.3f (%d launches) norm %.3f' % (g['total_ms'], g['launches'], g['by_type']['norm']['ms']) for g in d['graphs']))")"
  done
done
# Then the final code (quads) through bench/e2e.py beside diffusers, bounded to fit the session's device time.
timeout 200 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json" 2>/dev/null; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -7 "$OUT/e2e.log" 2>/dev/null
cp /tmp/e2e/profile.json "$OUT/profile.json" 2>/dev/null
