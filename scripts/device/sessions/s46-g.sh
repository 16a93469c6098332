#!/usr/bin/env bash
# Session 46, call G (issue 17; carry .gl .carry after `scripts/device/pack.sh build/default/bench/mma_peak_bench` and
# `scripts/device/slim-tree.sh on`): registers of fp16 against fp32 accumulators at the same warp tiles
# (`mma_peak_bench`, fragments from shared memory, SDGEN_PIPELINE_STATS=1): does an fp16 accumulator fragment
# take fewer registers than an fp32 one on this driver (halo-f23's 16 fp16 products held it at ~180)?
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_PIPELINE_STATS=1 timeout 120 ./build/default/bench/mma_peak_bench --rounds 10 \
  4,2,f32,shared 4,2,f16,shared 4,4,f32,shared 4,4,f16,shared 8,2,f16,shared 4,2,f32,regs 4,2,f16,regs \
  4,4,f32,regs 4,4,f16,regs > "$OUT/mma-peak.txt" 2>&1
echo "rc=$?"
grep -E "Register Count|TFLOP" "$OUT/mma-peak.txt" | sed -E 's/.*pipeline stats ([^:]*).*Register Count=([0-9]+).*/\1 regs \2/' | cut -c1-160
