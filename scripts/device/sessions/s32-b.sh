#!/usr/bin/env bash
# Ran with the rule of call B (8 subgroups from 1024 query rows, 64-key blocks up to D 128); SDGEN_FLASH_SUBGROUPS=4 is kept.
# Session 32, call B (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/bench/attention_bench` and
# `scripts/device/slim-tree.sh on`). The accumulator-softmax attention with 8 subgroups of one row tile from
# 1024 query rows (the new rule; SDGEN_FLASH_SUBGROUPS=4 restores the old tile): the tests with validation, the
# block sizes and 16 subgroups on SD 1.5's shapes, the UNet step's GPU time (alternating with the old tile) and
# issue 19's end-to-end bench.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 300 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*AccumulatorSoftmax*:AttentionCoopTiles.*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|error" "$OUT/tests.log" | head -16
B=./build/default/bench/attention_bench
SDGEN_PIPELINE_STATS=1 timeout 120 $B 16 4096 4096 40 8 cm2:64,2,4 cm2:64,1,8 cm2:32,1,8 cm2:16,1,8 cm2:64,1,16 \
  cm2:32,1,16 cm2:64,1,8 --reps 10 > "$OUT/bench-64.txt" 2> "$OUT/bench-64-stats.txt"
cut -c1-200 "$OUT/bench-64.txt"
grep -oE "pipeline stats [^[]*|Register Count=[0-9]+|Shared Memory Size=[0-9]+" "$OUT/bench-64-stats.txt" | paste -sd' ' | sed 's/pipeline stats/\n/g' | head -20
timeout 60 $B 16 4096 77 40 8 cm2:32,2,4 cm2:32,1,8 cm2:16,1,8 cm2:32,1,16 --reps 10 | cut -c1-200
timeout 60 $B 16 1024 1024 80 8 cm2:64,1,4 cm2:64,1,8 cm2:32,1,8 cm2:64,1,16 --reps 10 | cut -c1-200
timeout 60 $B 16 1024 77 80 8 cm2:32,1,4 cm2:32,1,8 cm2:16,1,8 --reps 10 | cut -c1-200
timeout 60 $B 16 256 256 160 8 cm2:32,1,4 cm2:32,1,8 --reps 10 | cut -c1-200
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in 8-r1 4-r1 8-r2 4-r2; do
  SDGEN_FLASH_SUBGROUPS=${v:0:1} timeout 100 ./build/default/tests/model_check/sdgen_model_check \
    --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /' | head -4
done
rm -f "$OUT"/check-*-r2.txt
rm -rf /tmp/e2e; bash scripts/device/e2e.sh > "$OUT/e2e-run.txt" 2>&1
echo "e2e rc=$?"; tail -16 "$OUT/e2e-run.txt"
