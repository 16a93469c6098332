#!/usr/bin/env bash
# Session 10, call J: the conv table (fp16, cuDNN in the same run) with the large-problem bucket forced to the
# 256x256 fp16-chunk tile through spirv-opt (SDGEN_COOP_BIG_TILE), to see the VAE rows.
set -uo pipefail
source scripts/device/vulkan-env.sh; source scripts/device/cuda-env.sh
export SDGEN_CACHE_DIR=/tmp/cachej
SDGEN_COOP_BIG_TILE=256,256,32,8,4,H,F2048,O timeout 400 ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn \
  --json $OUT/conv_big.json > $OUT/conv_big.txt 2>&1; echo "rc=$?"
grep -E "geometric|coop" $OUT/conv_big.txt | grep -E "vae|geometric" | cut -c1-170 | head -40
