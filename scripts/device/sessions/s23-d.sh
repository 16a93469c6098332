#!/usr/bin/env bash
# Session 23, call D (issues 17, 19, 22), carry .gl .carry, after `scripts/device/pack.sh
# build/default/bench/mma_peak_bench build/default/tests/ops/ops_tests`: the tensor cores' rate through
# VK_KHR_cooperative_matrix with no global loads (bench/mma_peak_bench), per accumulator type, warp tile (NA x NB
# fragments of 16 x 16), fragment source (shared memory each step, as gemm_coop's multiplySlice, or registers)
# and subgroups per workgroup: the ceiling the GEMM core's 264 TFLOP/s (4096^3) is measured against.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 60 ./build/default/tests/ops/ops_tests --gtest_filter='GemmCoopRule.MmaPeak*' 2>&1 | grep -E "^\[  (PASSED|FAILED)"
timeout 300 ./build/default/bench/mma_peak_bench --rounds 20 \
  2,2,f32,regs 4,2,f32,regs 4,4,f32,regs 8,2,f32,regs 2,2,f32,regs,4 4,2,f32,regs,4 4,4,f32,regs,4 1,1,f32,regs 2,1,f32,regs \
  2,2,f32,shared 4,2,f32,shared 4,4,f32,shared 2,2,f32,shared,4 4,2,f32,shared,4 4,4,f32,shared,4 \
  2,2,f16,regs 4,2,f16,regs 4,4,f16,regs 8,4,f16,regs 4,4,f16,regs,4 \
  2,2,f16,shared 4,2,f16,shared 4,4,f16,shared 8,4,f16,shared 4,4,f16,shared,4 2>&1 | grep -v "^ \|^device"
SDGEN_PIPELINE_STATS=1 timeout 60 ./build/default/bench/mma_peak_bench --rounds 2 4,4,f32,regs 4,2,f32,shared 8,4,f16,regs 2>&1 \
  | grep "pipeline stats" | cut -c1-200
