#!/usr/bin/env bash
# Session 12, call B (issue 19): the per-launch profile of the SD 1.5 fp16 step and VAE decode (JSON: every
# non-conv launch), and a 6-image batch with the banded multi-threaded PNG encoder (-v: png encode, file write).
# Carry .gl .carry .whl. Results in $OUT/s12-b.tar.gz (few files come back).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
export SDGEN_CACHE_DIR=/tmp/sdcache
r=/tmp/s12-b; mkdir -p $r
./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
  --json $r/profile.json > $r/profile.txt 2>&1; echo profile rc=$?
./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
  --json $r/profile2.json > $r/profile2.txt 2>&1; echo profile2 rc=$?
./build/default/app/sdgen -m /tmp/sd15/sd15-random -p "a lighthouse at dusk" -s 42 -W 512 -H 512 --steps 20 \
  --cfg-scale 7 --sampler euler --precision fp16 --batch-count 8 -o /tmp/img.png -v 2>&1 | \
  while IFS= read -r l; do echo "$(date +%s.%N) $l"; done > $r/batch.log
grep -E "wrote|timings|compile|encode|denoise|decode|png|write" $r/batch.log | cut -c1-150
python3 - $r/profile2.json <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
for g in d["graphs"]:
    agg = collections.defaultdict(lambda: [0, 0.0])
    for o in g["others"]:
        k = o["type"] + " | " + o["label"].split(" ")[-1] if False else o["type"] + " | " + " ".join(w for w in o["label"].split() if not w.isdigit())
        agg[k][0] += 1; agg[k][1] += o["ms"]
    print(g["name"], round(g["total_ms"], 3))
    for k, (n, ms) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:25]:
        print(f"  {ms:8.3f} ms {n:4d}  {k[:110]}")
PY
tar -czf $OUT/s12-b.tar.gz -C $r .
