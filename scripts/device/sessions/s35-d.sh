#!/usr/bin/env bash
# Session 35, call D (issue 22; the candidate was rejected and removed after this call; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). The 64x160 conv
# candidate (SDGEN_CONV_WAVE_TILE=0 leaves it out): its test with validation; SDXL's profile with a fresh tuning
# cache each way (which layers take it, conv time); SDXL's fp16 step on / off / on beside diffusers; SD 1.5's step
# off / on (its 64^2 level is in the bucket).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopWaveTile*:*CoopMidTile*:ConvTune*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|error" "$OUT/tests.log" | head -10 | cut -c1-200
w=/tmp/sdxl; mkdir -p "$w"
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "fp16: torch UNet step" "$OUT/make.log" | tail -1
for v in off on; do
  t=1; [ $v = off ] && t=0
  SDGEN_CACHE_DIR=/tmp/cache-$v SDGEN_CONV_WAVE_TILE=$t timeout 170 ./build/default/app/sdgen --profile-conv -m "$w/models/sdxl-random" \
    -W 1024 -H 1024 --precision fp16 --json "$OUT/profile-$v.json" > "$OUT/profile-$v.txt" 2>&1; echo "profile $v rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
d = {v: json.load(open(f"{out}/profile-{v}.json")) for v in ("off", "on")}
for v in d:
    g = d[v]["graphs"][0]
    print(v, "autotune", {k: d[v]["autotune"][k] for k in ("problems_tuned", "launches", "seconds")}, "step", round(g["total_ms"], 3),
          {k: round(x["ms"], 3) for k, x in g["by_type"].items()})
on = {c["layer"]: c for c in d["on"]["graphs"][0]["convs"]}
for c in d["off"]["graphs"][0]["convs"]:
    o = on[c["layer"]]
    if o["candidate"] != c["candidate"] or abs(o["ms"] - c["ms"]) > 0.01:
        print(f"  {c['layer']:26s} {c['ms']:.3f} {c['candidate']:22s} -> {o['ms']:.3f} {o['candidate']}")
PY
for r in on-1 off-1 on-2; do
  t=1; [ "${r%-*}" = off ] && t=0
  SDGEN_CACHE_DIR=/tmp/cache-${r%-*} SDGEN_CONV_WAVE_TILE=$t timeout 170 ./build/default/tests/model_check/sdgen_model_check \
    --refs "$w/refs/sdxl_random" --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$r.txt" 2>&1
  echo "sdxl $r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "unet rel err" "$OUT/check-$r.txt" | tr -s ' ' | sed 's/^/    /'
done
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
for r in off-1 on-1 off-2 on-2; do
  t=1; [ "${r%-*}" = off ] && t=0
  SDGEN_CACHE_DIR=/tmp/cache15-${r%-*} SDGEN_CONV_WAVE_TILE=$t timeout 100 ./build/default/tests/model_check/sdgen_model_check \
    --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/sd15-$r.txt" 2>&1
  echo "sd15 $r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/sd15-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "unet rel err" "$OUT/sd15-$r.txt" | tr -s ' ' | sed 's/^/    /'
done
