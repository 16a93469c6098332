#!/usr/bin/env bash
# Session 24, call B (carry .gl .carry; `scripts/device/slim-tree.sh on` for the call), after
# `scripts/device/pack.sh build/default/bench/mma_peak_bench`: the MMA loop with its fragments loaded from global
# memory (L1 hits) beside shared memory and registers (bench/mma_peak_bench `global`, `global32`): whether a GEMM
# could feed the tensor cores without shared-memory staging, now that an SM holds only ~48 KB of it (call A).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_PIPELINE_STATS=1 timeout 300 ./build/default/bench/mma_peak_bench --rounds 20 \
  4,2,f32,regs 4,2,f32,shared 4,2,f32,global 4,2,f32,global32 \
  2,2,f32,shared,4 2,2,f32,global,4 2,2,f32,global32,4 \
  4,4,f32,shared,4 4,4,f32,global,4 4,4,f32,global32,4 4,4,f32,global32,8 \
  2,2,f32,global32,8 4,2,f32,global32,4 4,2,f32,global32,16 > "$OUT/mma-peak-global.txt" 2>&1
echo "rc=$?"; grep -vE "^  (heap|features|cooperative|  [0-9])|pipeline stats" "$OUT/mma-peak-global.txt" | tail -16
grep "pipeline stats" "$OUT/mma-peak-global.txt" | cut -c1-200 | sort -u | head -20
