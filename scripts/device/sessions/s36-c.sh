#!/usr/bin/env bash
# Session 36, call C (issue 22; carry .gl .carry after `scripts/device/pack.sh build/default/bench/linear_bench` and
# `scripts/device/slim-tree.sh on`). Bounds two ideas before building them (scripts/device/sessions/s36-c-shapes.json):
# the GEGLU projection's last third wave split over K, and SDXL's ff outs on the 256x256 fp16-accumulator tile.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
L=./build/default/bench/linear_bench S=scripts/device/sessions/s36-c-shapes.json
for r in 1 2; do
  timeout 120 $L $S --rounds 20 --only geglu auto > "$OUT/geglu-$r.txt" 2>&1; echo "geglu $r rc=$?"
  grep -E "^geglu|auto" "$OUT/geglu-$r.txt" | head -8 | cut -c1-200
done
timeout 200 $L $S --rounds 20 --only "ff out" auto coop:256,256,32,8,4,H,s3,O coop:256,256,32,8,4,H,s2,O \
  coop:256,256,32,8,4,H,s4,O coop:256,128,32,8,2,H,s2,O > "$OUT/ffout.txt" 2>&1; echo "ff out rc=$?"
cat "$OUT/ffout.txt" | cut -c1-220 | tail -30
