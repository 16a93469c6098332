#!/usr/bin/env bash
# Session 12, call C (issue 19): the text encoder's per-launch profile (--profile-conv now profiles it), then
# issue 19's end-to-end bench (scripts/device/e2e.sh) with the banded PNG encoder. Carry .gl .carry .whl.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
r=/tmp/s12-c; mkdir -p $r
SDGEN_CACHE_DIR=/tmp/sdcache ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 \
  --precision fp16 --json $r/profile.json > $r/profile.txt 2>&1; echo profile rc=$?
python3 - $r/profile.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = [g for g in d["graphs"] if g["name"] == "text encoder"][0]
print("text encoder", round(g["total_ms"], 3), g["launches"], {k: round(v["ms"], 3) for k, v in g["by_type"].items()})
for o in g["others"][:40]:
    print(f'  {o["ms"]:.4f} {o["type"]:9} {o["label"][:100]}')
PY
bash scripts/device/e2e.sh > $r/e2e.txt 2>&1; echo "e2e rc=$?"
tail -22 $r/e2e.txt
cp $OUT/h100-e2e*.json $r/ 2>/dev/null; rm -f $OUT/*.json $OUT/e2e.log
tar -czf $OUT/s12-c.tar.gz -C $r .
