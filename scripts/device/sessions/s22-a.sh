#!/usr/bin/env bash
# Session 22, call A (issues 19, 17), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`:
# a per-layer sweep of the coop GEMM's tile for every problem outside the large-problem bucket
# (SDGEN_COOP_SMALL_TILE, `--no-autotune`: the linear layers and the rule's conv tiles), to see which tile wins
# which layer (bench/profile_compare.py on the JSON reports). New shapes: 160 columns (N = 320 · 2^k in two
# tiles, no padded column), checked first by the coop tests under the override. (The device tool did not return
# the files whose names hold commas: only the totals printed below came back.)
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
F='*Coop*:GemmSplitK.*:*MatmulWithHalfB*:LinearTest.*:*Geglu*'
for t in 64,160,32,2,5 128,160,32,2,5; do
  SDGEN_COOP_SMALL_TILE=$t SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter="$F" > "$OUT/ops-$t.log" 2>&1
  echo "ops_tests $t rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops-$t.log" | tr '\n' ' ')"
  grep -E "FAILED  \]" "$OUT/ops-$t.log" | head -5
  grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops-$t.log"
done
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 --json "$OUT/profile-tuned.json" > /dev/null 2>&1; echo "tuned rc=$?"
summary() { python3 -c "
import json; d=json.load(open('$1'))
print(' | '.join(g['name'].split()[0] + ' %.3f (conv %.3f linear %.3f)' % (g['total_ms'], g['by_type']['conv']['ms'], g['by_type']['linear']['ms']) for g in d['graphs']))"; }
echo "tuned: $(summary "$OUT/profile-tuned.json")"
for round in 1 2; do
  for t in base 64,64,64,2,2 128,64,32,4,2 64,128,32,2,4 64,64,32,4,2 64,160,32,2,5 128,160,32,2,5; do
    [ $round = 2 ] && [ $t != base ] && [ $t != 64,160,32,2,5 ] && [ $t != 128,64,32,4,2 ] && continue
    v=$t; [ $t = base ] && v=
    SDGEN_COOP_SMALL_TILE=$v ./build/default/app/sdgen --profile-conv --no-autotune -m $m -W 512 -H 512 --precision fp16 \
      --json "$OUT/profile-$t-$round.json" > "$OUT/profile-$t-$round.txt" 2>&1
    echo "tile $t round $round rc=$?: $(summary "$OUT/profile-$t-$round.json")"
  done
done
SDGEN_PIPELINE_STATS=1 SDGEN_COOP_SMALL_TILE=64,160,32,2,5 ./build/default/app/sdgen --profile-conv --no-autotune -m $m -W 512 -H 512 \
  --precision fp16 2>&1 | grep "pipeline stats" | sort -u > "$OUT/pipeline-stats.txt"
wc -l "$OUT/pipeline-stats.txt"; grep -i coop "$OUT/pipeline-stats.txt" | head -4 | cut -c1-400
rm -f "$OUT"/profile-*.txt
