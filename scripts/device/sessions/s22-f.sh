#!/usr/bin/env bash
# Session 22, call F (issues 19, 17), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`:
# the session's final code (the upsamplers by output phase, the residual add loaded into the accumulators): the
# phases' tests with validation, then bench/e2e.py beside diffusers and the profile of the same call.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*Upsample*' > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops.log" | tr '\n' ' ')"
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json"; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -7 "$OUT/e2e.log"
cp /tmp/e2e/profile.json "$OUT/profile.json" 2>/dev/null
python3 -c "
import json; d=json.load(open('$OUT/profile.json'))
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), g['launches'], {k: round(v['ms'], 3) for k, v in g['by_type'].items()})
    for c in g['convs']:
        if 'upsample' in c['layer']: print('   ', c['layer'], round(c['ms'], 4), [(k['label'].split(' upsample ')[-1], round(k['ms'], 4)) for k in c['kernels']])"
