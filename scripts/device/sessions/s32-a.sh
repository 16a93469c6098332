#!/usr/bin/env bash
# Needs scripts/device/sessions/s32-a-interleaved-row-tiles-rejected.patch applied (the interleaved row tiles and the
# SDGEN_FLASH_INTERLEAVE knob were not kept; its 8-subgroup variants are the kept rule's own).
# Session 32, call A (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/bench/attention_bench` and
# `scripts/device/slim-tree.sh on`). The accumulator-softmax attention (flash_coop2.slang) with its row tiles'
# phases interleaved (ILV 1: one K fragment load for all row tiles, the tiles' chains side by side) and with 8
# subgroups per workgroup: the tests with validation, attention_bench on the 64^2 self-attention (registers
# per variant) and SD 1.5's other shapes, and the UNet step's GPU time and parity with
# SDGEN_FLASH_INTERLEAVE / SDGEN_FLASH_SUBGROUPS alternating.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 300 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*AccumulatorSoftmax*:AttentionCoopTiles.*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|max err|error" "$OUT/tests.log" | head -16
B=./build/default/bench/attention_bench
SDGEN_PIPELINE_STATS=1 timeout 150 $B 16 4096 4096 40 8 cm2:64,2,4 cm2:64,2,4,1 cm2:64,2,8 cm2:64,2,8,1 \
  cm2:64,1,8,1 cm2:64,4,4,1 cm2:64,4,2,1 cm2:64,2,4 --reps 10 > "$OUT/bench-64.txt" 2> "$OUT/bench-64-stats.txt"
cat "$OUT/bench-64.txt" | cut -c1-210
grep -oE "pipeline stats [^[]*|Register Count=[0-9]+|Shared Memory Size=[0-9]+" "$OUT/bench-64-stats.txt" | paste -sd' ' | sed 's/pipeline stats/\n/g' | head -20
timeout 60 $B 16 4096 77 40 8 cm2:32,2,4 cm2:32,2,4,1 cm2:32,2,8,1 --reps 10 | cut -c1-200
timeout 60 $B 16 1024 1024 80 8 cm2:64,1,4 cm2:64,2,4,1 cm2:64,1,8,1 --reps 10 | cut -c1-200
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in 00-r1 10-r1 08-r1 18-r1 00-r2 10-r2 08-r2 18-r2; do
  SDGEN_FLASH_INTERLEAVE=${v:0:1} SDGEN_FLASH_SUBGROUPS=${v:1:1} timeout 100 ./build/default/tests/model_check/sdgen_model_check \
    --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step GPU' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ')"
  grep -E "rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /' | head -4
done
rm -f "$OUT"/check-*-r2.txt
