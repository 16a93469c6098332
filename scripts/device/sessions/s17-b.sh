#!/usr/bin/env bash
# Session 17, call B (issues 19, 17), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check build/default/tests/graph_tests build/default/tests/ops/ops_tests`
# and `slim-tree.sh on`: the group-norm statistics' scalar path (groups of 10 and 30 channels) checked with
# validation, then the end-to-end table on the H200 (diffusers eager and CUDA graph in the same call) with the
# profile of the same code (`bench/e2e.py` writes /tmp/e2e/profile.json).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 ./build/default/tests/graph_tests --gtest_filter='*Reduce*:*Norm*' > "$OUT/graph_tests.log" 2>&1
echo "graph_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/graph_tests.log" | head
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*Norm*:*Reduce*' > "$OUT/ops_norm.log" 2>&1
echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/ops_norm.log" | head
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/graph_tests.log" "$OUT/ops_norm.log"
bash scripts/device/e2e.sh > "$OUT/e2e-run.txt" 2>&1; echo "e2e rc=$?"
tail -12 "$OUT/e2e-run.txt"; grep -E "text encode|decode  " /tmp/e2e/sdgen-images.stderr | head -4
cp /tmp/e2e/profile.json "$OUT/profile.json" 2>/dev/null
python3 - <<'PY'
import json
d = json.load(open('/tmp/e2e/profile.json'))
for g in d['graphs'][:2]:
    print(g['name'], round(g['total_ms'], 3), {k: round(v['ms'], 3) if isinstance(v, dict) else v for k, v in g['by_type'].items()})
    n = sorted((o for o in g['others'] if o['type'] == 'norm'), key=lambda o: -o['ms'])[:6]
    for o in n: print('  ', round(o['ms'], 4), o['label'])
PY
