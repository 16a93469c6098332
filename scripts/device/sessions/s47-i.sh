#!/usr/bin/env bash
# Session 47, call I (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): the committed
# coop-winograd-rows halo3 tile's registers (SDGEN_PIPELINE_STATS=1) and each launch's time on 256 channels at 512^2
# (tuned: halo3 is the only rows candidate), cuDNN beside.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/c47i
SDGEN_PIPELINE_STATS=1 SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c47i timeout 120 ./build/default/app/sdgen \
  --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape 1,256,256,512,512,3,1 > "$OUT/row.txt" 2>&1
echo "rc=$?"; grep -E "pipeline stats .*(rows|coop 128x128 halo coop)" "$OUT/row.txt" | sort -u | cut -c1-200
awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21}' "$OUT/row.txt"
grep "^kernel" "$OUT/row.txt" | grep -v general | tail -8
