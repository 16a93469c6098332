#!/usr/bin/env bash
# Session 34, call A (issue 22), carry .gl .carry, after `scripts/device/pack.sh build/default/bench/linear_bench
# build/default/bench/attention_bench`: tiles whose count fits the GPU's resident slots. SDXL's 2048 x 1280 and
# 8192 x 640 outputs fill 1.2 waves of 128 x 128 tiles and run on 64 x 64 tiles at ~140 TFLOP/s; 128 x 80, 64 x 160
# and 128 x 160 tiles make 256 of them (one wave). Every SDXL linear shape, the engine's choice beside them.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
V="auto coop:128,128,32,4,2 coop:64,64,32,2,2 coop:128,64,32,4,2 coop:128,64,32,2,2 coop:128,80,32,2,5
   coop:64,160,32,2,5 coop:128,160,32,2,5 coop:64,128,32,2,2 coop:128,96,32,2,3"
SDGEN_PIPELINE_STATS=1 timeout 450 ./build/default/bench/linear_bench bench/data/sdxl_linear_shapes.json --rounds 10 \
  --json "$OUT/tiles.json" $V > "$OUT/tiles.txt" 2>&1; echo "tiles rc=$?"
grep -v -i "pipeline\|registers\|binary\|shared mem" "$OUT/tiles.txt" | cut -c1-160
grep -i "registers" "$OUT/tiles.txt" | sort | uniq -c | sort -rn | head -20 | cut -c1-200
