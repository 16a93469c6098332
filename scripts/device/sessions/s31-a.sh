#!/usr/bin/env bash
# Needs scripts/device/sessions/s31-half-softmax-rejected.patch applied (the modes were not kept).
# Session 31, call A (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/bench/attention_bench` and
# `scripts/device/slim-tree.sh on`). fp16 accumulation in the accumulator-softmax attention
# (flash_coop2.slang HALF 1: scores and softmax in fp16; HALF 2: also P V per key block): the tests with
# validation, attention_bench on SD 1.5's four self-attention shapes and the 64^2 cross-attention, registers
# per variant, and the UNet step's GPU time and parity with SDGEN_FLASH_HALF=0/1/2 alternating.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 240 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*AccumulatorSoftmax*:AttentionCoopTiles.*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|max err|error" "$OUT/tests.log" | head -16
B=./build/default/bench/attention_bench
SDGEN_PIPELINE_STATS=1 timeout 120 $B 16 4096 4096 40 8 cm2:64,2,4 cm2:64,2,4,1 cm2:64,2,4,2 cm2:64,1,4,2 \
  cm2:64,4,4,2 cm2:32,2,4,2 cm2:64,2,4 --reps 10 > "$OUT/bench-64.txt" 2> "$OUT/bench-64-stats.txt"
cat "$OUT/bench-64.txt" | cut -c1-210
grep -oE "pipeline stats [^[]*|Register Count=[0-9]+|Shared Memory Size=[0-9]+" "$OUT/bench-64-stats.txt" | paste -sd' ' | sed 's/pipeline stats/\n/g' | head -20
timeout 60 $B 16 4096 77 40 8 cm2:32,2,4 cm2:32,2,4,1 cm2:32,2,4,2 --reps 10 | cut -c1-200
timeout 60 $B 16 1024 1024 80 8 cm2:64,1,4 cm2:64,1,4,1 cm2:64,1,4,2 cm2:64,2,4,2 --reps 10 | cut -c1-200
timeout 60 $B 16 256 256 160 8 cm2:32,1,4 cm2:32,1,4,1 cm2:32,1,4,2 --reps 10 | cut -c1-200
timeout 60 $B 16 64 64 160 8 cm2:32,1,4 cm2:32,1,4,1 cm2:32,1,4,2 --reps 10 | cut -c1-200
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in h0-r1 h1-r1 h2-r1 h0-r2 h1-r2 h2-r2; do
  SDGEN_FLASH_HALF=${v:1:1} timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
    --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step GPU' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ')"
  grep -E "rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /' | head -4
done
rm -f "$OUT"/check-*-r2.txt
