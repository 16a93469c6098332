#!/usr/bin/env bash
# Session 28, call A (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Two changes, each
# behind a knob for this A/B:
# - the upsamplers' phase filters made once at load (Conv2dWeights::upsamplePhases) instead of by a launch in
#   every step (SDGEN_UPSAMPLE_PHASE_FILTERS=call: per call, as before);
# - the conv autotune's candidates for few rows (the UNet's 8² and 16² levels): 128x128 and 128x64 tiles split in
#   up to 32 parts, 64x64 in 32 (SDGEN_CONV_WIDE_SPLIT=0: not; each variant its own tuning cache).
# Their tests with validation; `sdgen --profile-conv` of base, new, base, new (~5 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*Upsample*:*CoopBigTileSplitK*:ConvTune*:*CoopWhereSupported*' > "$OUT/tests.log" 2>&1
trc=$?; echo "ops tests rc=$trc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|max relative|FAILED" "$OUT/tests.log" | head -12
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in base-r1 new-r1 base-r2 new-r2; do
  case ${v%-r*} in
    base) e="SDGEN_UPSAMPLE_PHASE_FILTERS=call SDGEN_CONV_WIDE_SPLIT=0 SDGEN_CACHE_DIR=/tmp/cache-base";;
    new) e="SDGEN_CACHE_DIR=/tmp/cache-new";; esac
  env $e timeout 100 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "$v rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'conv|linear|atten|norm|total' | tr -s ' ' | tr '\n' ' ')"
  python3 -c "import json; a=json.load(open('$OUT/prof-$v.json'))['autotune']; print('  autotune', a['seconds'], 's', a['launches'], 'launches', a['problems_tuned'], 'tuned')"
done
python3 bench/profile_compare.py --graph unet --top 30 base=$OUT/prof-base-r1.json,$OUT/prof-base-r2.json \
  new=$OUT/prof-new-r1.json,$OUT/prof-new-r2.json > "$OUT/compare.txt" 2>&1
python3 bench/profile_compare.py --graph vae --top 12 base=$OUT/prof-base-r1.json,$OUT/prof-base-r2.json \
  new=$OUT/prof-new-r1.json,$OUT/prof-new-r2.json > "$OUT/compare-vae.txt" 2>&1
grep -E "^  (base|new) " "$OUT/compare.txt" "$OUT/compare-vae.txt"
rm -f "$OUT"/prof-*-r2.json
