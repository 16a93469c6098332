#!/usr/bin/env bash
# Session 28, call B (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Since call A: the
# few-row kernel (shaders/linear/gemv.slang) for linear layers of <= 8 rows (the UNet's time MLP and its ResNet
# time projections: M = 2), SDGEN_GEMV=0: the tensor-core tile as before. Its tests with validation, then
# `sdgen --profile-conv` alternating SDGEN_GEMV=0 / default, two rounds, one tuning cache (~4 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*FewRowKernel*:*UpsamplePhaseFiltersMadeOnce*:*CoopUpsample*' > "$OUT/tests.log" 2>&1
trc=$?; echo "ops tests rc=$trc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|max \||FAILED" "$OUT/tests.log" | head -12
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in base-r1 gemv-r1 base-r2 gemv-r2; do
  case ${v%-r*} in base) e="SDGEN_GEMV=0";; gemv) e="SDGEN_GEMV=1";; esac
  env $e SDGEN_CACHE_DIR=/tmp/cache timeout 100 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "$v rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'linear|total' | tr -s ' ' | tr '\n' ' ')"
done
python3 bench/profile_compare.py --graph unet --top 16 base=$OUT/prof-base-r1.json,$OUT/prof-base-r2.json \
  gemv=$OUT/prof-gemv-r1.json,$OUT/prof-gemv-r2.json > "$OUT/compare.txt" 2>&1
grep -E "^  (base|gemv) " "$OUT/compare.txt"
rm -f "$OUT"/prof-*-r2.json
