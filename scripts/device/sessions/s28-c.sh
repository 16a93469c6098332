#!/usr/bin/env bash
# Session 28, call C (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Since call B: the
# few-row kernel reads whole 128-byte rows per quarter warp for wide outputs (the time projections: call B read
# 52 MB in 28.7 us, every lane another row). Its tests with validation; `sdgen --profile-conv` alternating
# SDGEN_GEMV=0 / default, two rounds; then issue 19's end-to-end bench on the default code (its model and
# diffusers' timings made at the start of this call), whose sdgen_model_check now times the step as the pipeline
# records it (the cross-attention K/V projections of the text once per image, before the steps); then the same
# UNet check with the projections inside the step (SDGEN_CHECK_KV_IN_STEP=1, as before session 28) (~9 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 100 ./build/default/tests/ops/ops_tests --gtest_filter='*FewRowKernel*' > "$OUT/tests.log" 2>&1
trc=$?; echo "ops tests rc=$trc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|max \||FAILED" "$OUT/tests.log" | head -6
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in base-r1 gemv-r1 base-r2 gemv-r2; do
  case ${v%-r*} in base) e="SDGEN_GEMV=0";; gemv) e="SDGEN_GEMV=1";; esac
  env $e SDGEN_CACHE_DIR=/tmp/cache timeout 100 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "$v rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'linear|total' | tr -s ' ' | tr '\n' ' ')"
done
python3 bench/profile_compare.py --graph unet --top 12 base=$OUT/prof-base-r1.json,$OUT/prof-base-r2.json \
  gemv=$OUT/prof-gemv-r1.json,$OUT/prof-gemv-r2.json > "$OUT/compare.txt" 2>&1
grep -E "^  (base|gemv) " "$OUT/compare.txt" | head -2; grep -E "time" "$OUT/compare.txt"
rm -f "$OUT"/prof-*-r2.json "$OUT"/prof-base-r1.json
[ "$trc" = 0 ] || export SDGEN_GEMV=0
timeout 330 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$? (SDGEN_GEMV=${SDGEN_GEMV:-})"
tail -16 "$OUT/e2e.log"
SDGEN_CHECK_KV_IN_STEP=1 timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
  --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-kv-in-step.txt" 2>&1
echo "kv-in-step rc=$?"; grep -E "unet" "$OUT/check-kv-in-step.txt"
