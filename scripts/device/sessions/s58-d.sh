#!/usr/bin/env bash
# Session 58, call D (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`): the
# UNet's 64^2 convs into 320 channels (unet.u3.res1 2 x 960 -> 320, the table's one row over 2x of cuDNN; u3.res
# 640 -> 320), where no halo or Winograd candidate runs today (Cout 320, M 8192 < 16384):
# coop-winograd-rows forced (its 64x64 im2col tile: Cout % 128 != 0), against the tuned choice with cuDNN beside,
# u3.res1 in two processes (cuDNN's 0.0754 ms in call C against 0.124-0.173 before).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
run() {  # shape, algo, reference
  rm -rf /tmp/c58d
  SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c58d timeout 100 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo $2 ${3:+--reference $3} --shape $1 > /tmp/row.txt 2>&1
  { echo "== $1 $2"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  echo "== $1 $2 at $SECONDS s: $(awk '$4 != "" && $2 ~ /\[/ {print $4, $5, "ms p10", $9, "p90", $10, "rel", $13, "cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, $22}' /tmp/row.txt | tail -1)"
  grep -E "^kernel|error|Error" /tmp/row.txt | tail -4 | sed 's/^/   /'
}
run 2,960,320,64,64,3,1 coop-winograd-rows
run 2,960,320,64,64,3,1 tuned cudnn
run 2,640,320,64,64,3,1 coop-winograd-rows
run 2,960,320,64,64,3,1 tuned cudnn
echo "done at $SECONDS s"
