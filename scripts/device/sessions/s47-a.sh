#!/usr/bin/env bash
# Session 47, call A (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): the GEMM floor of a
# Winograd F(4,3) along y for the VAE's 256-channel 512^2 convs. Its products are 6 batched 1x3 convolutions of the
# transformed input V [6, 128, 512, 256] (K = 768); a 1x1 convolution of 768 channels over 6 x 128 x 512 pixels is
# the same GEMM with a plain A. Tuned, one process each, beside the 3x3 rows they would replace.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/c47a
for s in 6,768,256,128,512,1,1 1,256,256,512,512,3,1 6,768,128,128,512,1,1 1,256,128,512,512,3,1 6,384,128,128,512,1,1 1,128,128,512,512,3,1; do
  SDGEN_CACHE_DIR=/tmp/c47a timeout 150 ./build/default/app/sdgen -v --bench-conv2d --precision fp16 --algo tuned \
    --reference cudnn --shape $s > "$OUT/row-$s.txt" 2>&1
  echo "== $s rc=$?"; awk '$4 == "tuned"' "$OUT/row-$s.txt" | tr -s ' ' | cut -c1-200
  grep -iE "tuned .* ms|candidate" "$OUT/row-$s.txt" | sort -t' ' -k1 | head -8 | cut -c1-160
done
