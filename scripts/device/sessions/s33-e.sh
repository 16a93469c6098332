#!/usr/bin/env bash
# Session 33, call E (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). The 128x64 conv tile as an
# autotune candidate where Cout % 128 != 0 (SDXL's 128^2 level): its test with validation, SDXL's profile with it
# and without (SDGEN_CONV_MID_TILE=0; each its own tuning cache, alternating), SDXL's step with everything.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 120 ./build/default/tests/ops/ops_tests --gtest_filter='*CoopMidTile*:*CoopBigTileSplitK*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|error|relative" "$OUT/tests.log" | head -12
w=/tmp/sdxl
timeout 200 python3 tests/reference/make_sdxl_random.py $w/models $w/refs > "$OUT/make.log" 2>&1; echo "make rc=$?"
grep -E "fp16: torch UNet step" "$OUT/make.log" | tail -1
for r in on-1 off-1 on-2 off-2; do
  v=1; [ "${r%-*}" = off ] && v=0
  SDGEN_CACHE_DIR=/tmp/cache-$v SDGEN_CONV_MID_TILE=$v timeout 150 ./build/default/app/sdgen --profile-conv -m $w/models/sdxl-random \
    -W 1024 -H 1024 --precision fp16 --json "$OUT/profile-$r.json" > "$OUT/profile-$r.txt" 2>&1; echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys, collections
out = sys.argv[1]
for r in ("on-1", "off-1", "on-2", "off-2"):
    d = json.load(open(f"{out}/profile-{r}.json"))
    g = d["graphs"][0]
    print(r, g["name"], round(g["total_ms"], 3), g["launches"], {k: round(v["ms"], 3) for k, v in g["by_type"].items()})
    if r.endswith("2"):
        for c in g["convs"]:
            if c["problem"].startswith("[2,128,128"): print(f"    {c['ms']:.4f} {c.get('tflops', 0):6.1f} {c.get('candidate', ''):22s} {c['layer']}")
PY
rm -f "$OUT"/profile-*-1.json "$OUT"/profile-*-1.txt "$OUT/make.log"
SDGEN_CACHE_DIR=/tmp/cache-1 timeout 170 ./build/default/tests/model_check/sdgen_model_check --refs $w/refs/sdxl_random \
  --model $w/models/sdxl-random --precision fp16 --repetitions 30 > "$OUT/check.txt" 2>&1
echo "check rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
grep -E "rel err" "$OUT/check.txt" | tr -s ' ' | sed 's/^/    /' | head -6
