#!/usr/bin/env bash
# Session 47, call G (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): how far cuDNN's time moves
# between processes on the two rows call F's table put over 2x (cuDNN's implicit_precomp_gemm at 0.3998 ms on 256
# channels at 512^2, 0.1220 on 128): each row in four processes on one tuning cache, ours beside.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/c47g
for i in 1 2 3 4; do
  for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
    SDGEN_CACHE_DIR=/tmp/c47g timeout 90 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
      --reference cudnn --shape $s > "$OUT/row-$i-${s//,/-}.txt" 2>&1
    awk -v i=$i -v s=$s '$4 == "tuned" {print "process", i, s, "ours", $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20}' \
      "$OUT/row-$i-${s//,/-}.txt"
  done
done
