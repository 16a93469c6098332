#!/usr/bin/env bash
# Session 35, call B (issue 22; carry .gl .carry after `scripts/device/pack.sh build/default/bench/linear_bench`
# and `scripts/device/slim-tree.sh on`). Call A: SDXL's GEGLU projections run 8-17 % faster on the 256 x 256
# fp16-accumulator tile (K <= 2048: no flush). Every SDXL and SD 1.5 linear shape on the fp16-accumulator tiles
# beside the engine's choice, to see where else they win and what the rule would change for SD 1.5.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
V="auto coop:256,256,32,8,4,H,F2048,O coop:128,128,32,4,4,H,O coop:256,128,32,4,4,H,O coop:128,256,32,4,4,H,O"
for m in sdxl sd15; do
  SDGEN_PIPELINE_STATS=1 timeout 270 ./build/default/bench/linear_bench bench/data/${m}_linear_shapes.json --rounds 10 \
    $V > "$OUT/$m.txt" 2>&1; echo "$m rc=$?"
  grep -v "pipeline stats" "$OUT/$m.txt" | cut -c1-150 | grep -v "^#"
done
grep "pipeline stats" "$OUT/sdxl.txt" | grep -i "256x256\|f16acc" | sort -u | head -5 | cut -c1-200
