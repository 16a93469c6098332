#!/usr/bin/env bash
# Session 12, call E (issue 19): the layer norm read in the GEMM prologue for few rows (M <= 256: the text
# encoder), checked against float64 with validation; token ids in host-visible memory and the starting noise
# drawn on the host during the text encode: the text encoder's profile, the -v breakdown, then the e2e bench.
# Carry .gl .carry .whl.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
r=/tmp/s12-e; mkdir -p $r
SDGEN_CACHE_DIR=/tmp/cachev SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*LinearNorm*:*GemmSplit*:Linear/LinearTest.*' > $r/ops.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|alidation error|fused layer norm" $r/ops.log | head -20
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
export SDGEN_CACHE_DIR=/tmp/sdcache
./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
  --json $r/profile.json > $r/profile.txt 2>&1; echo profile rc=$?
python3 - $r/profile.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["graphs"]:
    print(g["name"], round(g["total_ms"], 3), g["launches"], {k: round(v["ms"], 3) for k, v in g["by_type"].items()})
g = [g for g in d["graphs"] if g["name"] == "text encoder"][0]
for o in g["others"][:16]:
    print(f'  {o["ms"]:.4f} {o["type"]:9} {o["label"][:100]}')
PY
./build/default/app/sdgen -m /tmp/sd15/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 42 \
  -W 512 -H 512 --steps 20 --cfg-scale 7 --sampler euler --precision fp16 --batch-count 10 -o /tmp/img.png -v 2>&1 | \
  grep -A8 "^timings"
unset SDGEN_CACHE_DIR
bash scripts/device/e2e.sh > $r/e2e.txt 2>&1; echo "e2e rc=$?"
tail -9 $r/e2e.txt
cp $OUT/h100-e2e*.json $r/ 2>/dev/null; rm -f $OUT/*.json $OUT/e2e.log
tar -czf $OUT/s12-e.tar.gz -C $r .
