#!/usr/bin/env bash
# Session 23, call F, carry .gl .carry, after `scripts/device/pack.sh build/default/bench/linear_bench`: where the coop
# GEMM's time goes outside its MMA loop (call E: that loop alone runs 570 TFLOP/s on 64x32 warp tiles). The same
# kernels on plain GEMMs whose operands fit the L2 (scripts/device/sessions/s23-f-shapes.json) or not: if the
# L2-resident ones run no faster, the loss is the slice round trip itself (barriers, staging), not memory.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 300 ./build/default/bench/linear_bench scripts/device/sessions/s23-f-shapes.json --rounds 10 \
  coop:128,128,32,4,2 coop:64,64,32,2,2 coop:128,128,32,4,2,d coop:128,128,64,4,2 coop:128,128,16,4,2 coop:128,128,32,4,4 \
  coop:256,128,32,4,2 2>&1 | cut -c1-140
