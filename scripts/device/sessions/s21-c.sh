#!/usr/bin/env bash
# Session 21, call C (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/app/sdgen
# build/default/tests/ops/ops_tests` and `slim-tree.sh on`: the one-launch group norm's loads in flight per
# invocation (SDGEN_GROUP_NORM_UNROLL 4, 8, 16) with every group norm in one launch (SDGEN_GROUP_NORM_MAX=2^30),
# beside the statistics path (SDGEN_GROUP_NORM_MAX=0), `sdgen --profile-conv` of SD 1.5 fp16 twice, alternating,
# JSON reports per layer (docs/perf.md, session 21). The unroll variable was removed afterwards.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
for u in 8 16; do
  SDGEN_GROUP_NORM_UNROLL=$u SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*GroupNormRows*' > "$OUT/ops-$u.log" 2>&1
  echo "ops_tests unroll $u rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops-$u.log" | tr '\n' ' ')"
  grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops-$u.log"
done
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > /dev/null 2>&1; echo "tune rc=$?"
for round in 1 2; do
  for v in off 4 8 16; do
    max=1073741824; [ $v = off ] && max=0
    SDGEN_GROUP_NORM_MAX=$max SDGEN_GROUP_NORM_UNROLL=$([ $v = off ] && echo 4 || echo $v) ./build/default/app/sdgen \
      --profile-conv -m $m -W 512 -H 512 --precision fp16 --json "$OUT/profile-$v-$round.json" > /dev/null 2>&1
    echo "group norm $v, round $round rc=$?: $(python3 -c "
import json,sys; d=json.load(open('$OUT/profile-$v-$round.json'))
print(' '.join(g['name'].split()[0] + ' %.3f norm %.3f' % (g['total_ms'], g['by_type']['norm']['ms']) for g in d['graphs']))")"
  done
done
