#!/usr/bin/env bash
# Session 23, call C (issues 22, 19), carry .gl .carry, after `scripts/device/pack.sh build/default/bench/linear_bench`:
# linear_bench over SDXL's linear shapes (bench/data/sdxl_linear_shapes.json: 8.7 TFLOP per 1024^2 step) and SD
# 1.5's, GPU timestamps, the engine's choice (auto) beside fixed tiles, split-K and fp16 accumulation (ACC 2 ',H';
# in 2048/1024-deep chunks ',F'); every variant's output against the first's (fp32 accumulators, 128x128).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
V="coop:128,128,32,4,2 auto coop:64,64,32,2,2 coop:128,128,32,4,2,s2 coop:128,64,32,2,2 coop:64,128,32,2,2
   coop:128,128,32,4,4,H coop:128,128,32,4,4,H,O coop:256,128,32,4,4,H,O coop:128,256,32,4,4,H,O
   coop:256,256,32,8,4,H,F2048,O coop:128,128,32,4,4,H,F1024,O"
timeout 300 ./build/default/bench/linear_bench bench/data/sdxl_linear_shapes.json --rounds 10 --json "$OUT/sdxl.json" $V \
  > "$OUT/sdxl.txt" 2>&1; echo "sdxl rc=$?"
cut -c1-150 "$OUT/sdxl.txt"
timeout 200 ./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds 10 --json "$OUT/sd15.json" \
  coop:128,128,32,4,2 auto coop:128,128,32,4,4,H,O coop:256,128,32,4,4,H,O > "$OUT/sd15.txt" 2>&1; echo "sd15 rc=$?"
cut -c1-150 "$OUT/sd15.txt"
