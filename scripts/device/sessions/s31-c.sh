#!/usr/bin/env bash
# Needs scripts/device/sessions/s31-half-softmax-rejected.patch applied (the modes were not kept).
# Session 31, call C (carry and pack as s31-a.sh). Call B's half2 loops had a bound the compiler could not see
# and indexed the matrices in memory (8x slower); now the pairs use constant indices where an invocation holds
# 8 elements. Modes 5-7: fp32 scores, some key tiles' exponentials by a cubic on the FMA units (odd tiles, all,
# the last). The 64^2 self-attention bench with modes 0-7, the step with the promising ones, the tests last.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
B=./build/default/bench/attention_bench
SDGEN_PIPELINE_STATS=1 timeout 120 $B 16 4096 4096 40 8 cm2:64,2,4 cm2:64,2,4,1 cm2:64,2,4,2 cm2:64,2,4,3 \
  cm2:64,2,4,4 cm2:64,1,4,3 cm2:64,2,4,5 cm2:64,2,4,6 cm2:64,2,4,7 cm2:64,2,4 --reps 10 > "$OUT/bench-64.txt" 2> "$OUT/bench-64-stats.txt"
cat "$OUT/bench-64.txt" | cut -c1-170
grep -oE "pipeline stats [^[]*|Register Count=[0-9]+" "$OUT/bench-64-stats.txt" | paste -sd' ' | sed 's/pipeline stats/\n/g' | head -20
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in h0-r1 h3-r1 h5-r1 h7-r1 h0-r2 h3-r2 h5-r2 h7-r2; do
  SDGEN_FLASH_HALF=${v:1:1} timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
    --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step GPU' "$OUT/check-$v.txt" | tr -s ' ' | sed 's/.*median/median/')"
  grep -E "unet +rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /'
done
rm -f "$OUT"/check-*-r2.txt
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*AccumulatorSoftmax*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|max err|error" "$OUT/tests.log" | head -16
