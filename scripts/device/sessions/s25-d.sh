#!/usr/bin/env bash
# Session 25, call D (carry .gl .carry; after `scripts/device/pack.sh build/default/bench/linear_bench`): where a
# short GEMM's fixed time goes (call A: 8192 x K x 320 on 64 x 64 tiles = ~7.4 us + 0.98 us per 32-deep slice, and
# at K = 32 the time grows with the output at ~1 TB/s). One workgroup (the floor of a GEMM launch in a chain of
# timestamps), K = 32 with the output swept, equal output bytes in other shapes, the residual preload.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 300 ./build/default/bench/linear_bench scripts/device/sessions/s25-d-epilogue.json --rounds 10 \
  auto coop:64,64,32,2,2 coop:128,128,32,4,2 2>&1 | cut -c1-140 | tee "$OUT/epilogue.txt"
