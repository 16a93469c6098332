#!/usr/bin/env bash
# Session 48, call D (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): the bench's new time-based
# warm-up (at least 300 ms of replays per row before timing) from a cold GPU — the first process, forced rows — then
# the two rows over 2x in session 47's table (256 and 128 channels at 512^2), tuned beside cuDNN, four processes on
# one tuning cache: does cuDNN's fastest run (0.3998 / 0.1220 ms) come back once both run at warm clocks?
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
for i in 1 2; do
  timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo coop-winograd-rows \
    --shape 1,256,256,512,512,3,1 > /tmp/cold.txt 2>&1
  { echo "== cold $i"; cat /tmp/cold.txt; } >> "$OUT/rows.txt"
  awk -v i=$i '$1 == "shape" {print "cold process", i, $4, $5, "ms"}' /tmp/cold.txt
done
rm -rf /tmp/c48d
for i in 1 2 3 4; do
  for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
    SDGEN_CACHE_DIR=/tmp/c48d timeout 120 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
      --reference cudnn --shape $s > /tmp/row.txt 2>&1
    { echo "== process $i $s"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
    awk -v i=$i -v s=$s '$4 == "tuned" {print "process", i, s, "ours", $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20}' \
      /tmp/row.txt
  done
done
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
