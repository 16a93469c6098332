#!/usr/bin/env bash
# Session 37 (prepared for the next session), call C (issue 22; carry .gl .carry after `scripts/device/pack.sh
# build/default/tests/ops/ops_tests build/default/bench/attention_bench` and `scripts/device/slim-tree.sh on`).
# The accumulator-softmax attention with fp16 accumulation (flash_coop2.slang HACC; FlashCoopBlocks::halfAccumulate,
# SDGEN_ATTENTION_HALF_ACC) built without a device: its float64 tests with validation (a failure ends the call),
# then SDXL's self-attentions (64^2: BH 20 x 4096^2, 32^2: BH 40 x 1024^2, D 64) and cross-attention (77 keys), and
# SD 1.5's 64^2 self-attention (D 40), each with HALF 0-3 in one process (rounds interleaved).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 300 ./build/default/tests/ops/ops_tests --gtest_filter='*AccumulatorSoftmaxKernel*' \
  > "$OUT/tests.log" 2>&1
rc=$?
echo "ops tests rc=$rc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|got|VUID|max \|gpu" "$OUT/tests.log" | head -16 | cut -c1-220
[ $rc -eq 0 ] || exit 1
A=./build/default/bench/attention_bench
run() {  # BH Lq Lk D BKV NSG name
  timeout 120 $A "$1" "$2" "$3" "$4" 20 "cm2:$5,1,$6,-1,0" "cm2:$5,1,$6,-1,1" "cm2:$5,1,$6,-1,2" "cm2:$5,1,$6,-1,3" \
    > "$OUT/attn-$7.txt" 2>&1; echo "== $7 (BH $1, $2 x $3, D $4) rc=$?"
  grep -E "cm2" "$OUT/attn-$7.txt" | cut -c1-200
}
run 20 4096 4096 64 32 8 sdxl-64-self
run 40 1024 1024 64 32 8 sdxl-32-self
run 20 4096 77 64 32 8 sdxl-64-cross
run 40 1024 77 64 32 8 sdxl-32-cross
run 16 4096 4096 40 64 8 sd15-64-self
