#!/usr/bin/env bash
# Session 44, call A (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh` and
# `scripts/device/slim-tree.sh on`; prepared in session 43, whose device budget ran out before it ran). The
# driver's register and spill statistics (SDGEN_PIPELINE_STATS=1) of every conv candidate the tuner compiles for
# the two VAE rows still over 2x of cuDNN (256 channels at 512^2: 1.05 ms on the unsplit 256x256 fp16 tile, 296
# TFLOP/s; 256 -> 128 at 512^2: 0.67 ms on 128x128 fp32, 231), to compare the 256x256 tile with NVIDIA's sample
# (407 TFLOP/s on 4096^3 with the same tile shape; ours 334 plain, 312 flushed).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
for s in 1,256,256,512,512,3,1 1,256,128,512,512,3,1; do
  rm -rf /tmp/cs
  SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/cs timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo tuned --shape $s > "$OUT/stats-$s.txt" 2>&1
  echo "$s rc=$?"
  grep "pipeline stats" "$OUT/stats-$s.txt" | grep -i coop | sed -E 's/sdgen: pipeline stats //' | cut -c1-330 | head -14
done
