#!/usr/bin/env bash
# Session 23, call E, carry .gl .carry, after `scripts/device/pack.sh build/default/bench/mma_peak_bench
# build/default/tests/ops/ops_tests`: call D's fragment-from-shared variants again with padded fragment rows (48
# bytes, no bank conflicts, as gemm_coop's slices; call D's 32-byte rows had 2-way conflicts), and the fp16
# accumulator variants call D lost (its 8,4 f16 variant asked for 53 KB of shared memory: the device was lost).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 60 ./build/default/tests/ops/ops_tests --gtest_filter='GemmCoopRule.MmaPeak*' 2>&1 | grep -E "^\[  (PASSED|FAILED)"
timeout 300 ./build/default/bench/mma_peak_bench --rounds 20 \
  4,2,f32,regs 2,2,f32,shared 4,2,f32,shared 4,4,f32,shared 2,4,f32,shared 2,2,f32,shared,4 4,2,f32,shared,4 \
  4,4,f32,shared,4 1,1,f32,shared 2,1,f32,shared 8,2,f32,shared,4 \
  2,2,f16,shared 4,2,f16,shared 4,4,f16,shared 4,4,f16,shared,4 8,4,f16,regs,4 8,4,f16,shared,4 8,2,f16,shared 2>&1 \
  | grep -v "^ \|^device"
