#!/usr/bin/env bash
# Session 30, call C (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Split-K partials
# stored in fp16 (SDGEN_SPLIT_PARTIALS=f16: gemm_coop.slang SPLIT = 2, gemm_split.slang HALF = 1) instead of
# fp32: half the bytes the split GEMMs write and their sum launches read. The split tests with validation in
# fp16 partials; the step's GPU time and parity both ways, alternating; `--profile-conv` both ways; issue 19's
# end-to-end bench with fp16 partials (~8 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_SPLIT_PARTIALS=f16 SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*GemmSplit*:*CoopWhereSupported*:*CoopBigTileSplitK*:*CoopUpsample*:*SplitK*' > "$OUT/tests.log" 2>&1
echo "ops tests (f16 partials) rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|max err|error" "$OUT/tests.log" | head -12
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in base-r1 new-r1 base-r2 new-r2 base-r3 new-r3; do
  case ${v%-r*} in base) e="SDGEN_SPLIT_PARTIALS=f32";; new) e="SDGEN_SPLIT_PARTIALS=f16";; esac
  env $e timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
    --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step GPU' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ')"
  grep -E "rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /'
done
for v in base-r1 new-r1 base-r2 new-r2; do
  case ${v%-r*} in base) e="SDGEN_SPLIT_PARTIALS=f32";; new) e="SDGEN_SPLIT_PARTIALS=f16";; esac
  env $e SDGEN_CACHE_DIR=/tmp/cache-$v timeout 100 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "$v rc=$?: $(python3 -c "import json; d=json.load(open('$OUT/prof-$v.json')); print([(g['name'], g['launches'], round(g['total_ms'],3)) for g in d['graphs']])" 2>&1)"
done
python3 bench/profile_compare.py --graph unet --top 24 --aggregate base=$OUT/prof-base-r1.json,$OUT/prof-base-r2.json \
  new=$OUT/prof-new-r1.json,$OUT/prof-new-r2.json > "$OUT/compare.txt" 2>&1
head -34 "$OUT/compare.txt"
rm -f "$OUT"/prof-*-r2.json "$OUT"/check-*-r2.txt "$OUT"/check-*-r3.txt
