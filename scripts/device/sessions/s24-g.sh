#!/usr/bin/env bash
# Session 24, call G (carry .gl .carry .whl; `scripts/device/slim-tree.sh on` for the call), after
# `scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/bench/attention_bench
# build/default/tests/model_check/sdgen_model_check`: the accumulator-softmax attention's probabilities
# exponentiated in packed fp16 (SDGEN_FLASH_HALF_EXP=1): its float64 tests with validation, the 64^2
# self-attention of SD 1.5 (16 heads x 4096 x 4096, D 40) with and without, alternating, the fp16 model check and
# the UNet step's profile with and without.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
SDGEN_FLASH_HALF_EXP=1 SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*AccumulatorSoftmaxKernel*' > "$OUT/attn-tests.log" 2>&1
echo "tests (half exp) rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/attn-tests.log" | tr '\n' ' ')"
grep -E "rel|err|Failure" "$OUT/attn-tests.log" | head -12
for r in 1 2; do for v in 0 1; do
  SDGEN_FLASH_HALF_EXP=$v timeout 60 ./build/default/bench/attention_bench 16 4096 4096 40 20 cm2:64,2,4 2>&1 | \
    grep -E "^cm2" | sed "s/^/half_exp=$v round $r: /"
done; done
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
SDGEN_FLASH_HALF_EXP=1 timeout 300 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/sd15/refs/sd15_random \
  --model /tmp/sd15/sd15-random --precision fp16 2>&1 | grep -E "rel err|unet step" | cut -c1-160 | head -8
for v in 0 1 0 1; do
  SDGEN_FLASH_HALF_EXP=$v ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
    --json "/tmp/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "half_exp=$v: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'attention|total' | tr -s ' ' | tr '\n' ' ')"
done
