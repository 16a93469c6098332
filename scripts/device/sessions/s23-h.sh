#!/usr/bin/env bash
# Session 23, call H, carry .gl .carry, after `scripts/device/pack.sh build/default/bench/mma_peak_bench
# build/default/tests/ops/ops_tests`: call G found the slice round trip halving the 64x32 warp tile's loop (578 ->
# 312 TFLOP/s) even from L1. Which part: the barriers (one per slice with two staging areas, as DBUF) or the
# round trips per MMA (64-deep slices: half as many, with 8 words per invocation as BK 64 stages, or 4)?
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 60 ./build/default/tests/ops/ops_tests --gtest_filter='GemmCoopRule.MmaPeak*' 2>&1 | grep -E "^\[  (PASSED|FAILED)"
timeout 300 ./build/default/bench/mma_peak_bench --rounds 20 \
  4,2,f32,shared 4,2,f32,l1 4,2,f32,l1,8,2,4,1 4,2,f32,l1,8,4,8,2 4,2,f32,l1,8,4,4,2 4,2,f32,l1,8,4,8,1 4,2,f32,l1,8,8,16,2 \
  4,2,f32,l1,8,2,1,2 4,2,f32,l2,8,4,8,2 4,2,f32,l2,8,2,4,1 \
  2,2,f32,l1,4 2,2,f32,l1,4,2,4,1 2,2,f32,l1,4,4,8,2 2,2,f32,l2,4,4,8,2 2>&1 | grep -v "^ \|^device"
SDGEN_PIPELINE_STATS=1 timeout 60 ./build/default/bench/mma_peak_bench --rounds 2 4,2,f32,l1,8,4,8,2 4,2,f32,l1,8,2,4,1 2>&1 \
  | grep "pipeline stats" | cut -c1-200
