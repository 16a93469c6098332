#!/usr/bin/env bash
# Session 23, call G, carry .gl .carry, after `scripts/device/pack.sh build/default/bench/mma_peak_bench
# build/default/tests/ops/ops_tests`: mma_peak_bench with gemm_coop's slice round trip added to the shared-memory
# loop (4 words per invocation fetched one slice ahead, stored between two barriers every 32-deep slice), from L1
# (the same words), a 16 MB region (L2) and a 256 MB one (memory): how much of the GEMM core's loss (264 against
# call E's 570 TFLOP/s on 64x32 warp tiles) the round trip is, and whether where the words come from matters.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 60 ./build/default/tests/ops/ops_tests --gtest_filter='GemmCoopRule.MmaPeak*' 2>&1 | grep -E "^\[  (PASSED|FAILED)"
timeout 300 ./build/default/bench/mma_peak_bench --rounds 20 \
  4,2,f32,shared 4,2,f32,l1 4,2,f32,l2 4,2,f32,mem 2,2,f32,shared,4 2,2,f32,l1,4 2,2,f32,l2,4 2,2,f32,mem,4 \
  4,4,f32,l1,4 4,4,f32,l2,4 2>&1 | grep -v "^ \|^device"
SDGEN_PIPELINE_STATS=1 timeout 60 ./build/default/bench/mma_peak_bench --rounds 2 4,2,f32,l2 2,2,f32,l2,4 2>&1 \
  | grep "pipeline stats" | cut -c1-200
