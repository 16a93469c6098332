#!/usr/bin/env bash
# Ran with scripts/device/sessions/s29-b-split-sum-rejected.patch applied (git apply; rejected, not in the tree).
# Session 29, call A (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Split-K summed in the
# GEMM's own launch by each tile's last part (gemm_coop.slang SPLIT = 2) instead of a second launch
# (SDGEN_SPLIT_SUM=launch: as before). Its tests with validation (bit-identical to the sum launch, replays; the
# linear and conv coop tests against float64); `sdgen --profile-conv` of base, new, base, new (~6 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*GemmSplit*:*CoopWhereSupported*:*CoopBigTileSplitK*:*CoopUpsample*' \
  > "$OUT/tests.log" 2>&1
trc=$?; echo "ops tests rc=$trc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|bit-identical" "$OUT/tests.log" | head -14
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in base-r1 new-r1 base-r2 new-r2; do
  case ${v%-r*} in
    base) e="SDGEN_SPLIT_SUM=launch SDGEN_CACHE_DIR=/tmp/cache-base";;
    new) e="SDGEN_CACHE_DIR=/tmp/cache-new";; esac
  env $e timeout 100 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "$v rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'conv|linear|atten|norm|total' | tr -s ' ' | tr '\n' ' ')"
  python3 -c "import json; d=json.load(open('$OUT/prof-$v.json')); print('  launches', [(g['name'], g['launches'], round(g['total_ms'],3)) for g in d['graphs']])"
done
python3 bench/profile_compare.py --graph unet --top 30 base=$OUT/prof-base-r1.json,$OUT/prof-base-r2.json \
  new=$OUT/prof-new-r1.json,$OUT/prof-new-r2.json > "$OUT/compare.txt" 2>&1
python3 bench/profile_compare.py --graph vae --top 12 base=$OUT/prof-base-r1.json,$OUT/prof-base-r2.json \
  new=$OUT/prof-new-r1.json,$OUT/prof-new-r2.json > "$OUT/compare-vae.txt" 2>&1
grep -E "^  (base|new) " "$OUT/compare.txt" "$OUT/compare-vae.txt"
rm -f "$OUT"/prof-*-r2.json
