#!/usr/bin/env bash
# Session 12, call H (issue 19): no split-K for linears with K <= 1024 (the text encoder, the cross-attention K/V):
# LinearNorm/Linear tests with validation, the text encoder's profile, then the e2e bench. Carry .gl .carry .whl.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
r=/tmp/s12-h; mkdir -p $r
SDGEN_CACHE_DIR=/tmp/cachev SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*LinearNorm*:Linear/LinearTest.*:*Geglu*' > $r/ops.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|alidation error" $r/ops.log | head -10
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
SDGEN_CACHE_DIR=/tmp/sdcache ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 \
  --precision fp16 --json $r/profile.json > $r/profile.txt 2>&1; echo profile rc=$?
python3 - $r/profile.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["graphs"]:
    print(g["name"], round(g["total_ms"], 3), g["launches"], {k: round(v["ms"], 3) for k, v in g["by_type"].items()})
PY
bash scripts/device/e2e.sh > $r/e2e.txt 2>&1; echo "e2e rc=$?"
tail -9 $r/e2e.txt; grep -A1 "text encode" /tmp/e2e/sdgen-images.stderr | head -2
cp $OUT/h100-e2e*.json $r/ 2>/dev/null; rm -f $OUT/*.json $OUT/e2e.log
tar -czf $OUT/s12-h.tar.gz -C $r .
