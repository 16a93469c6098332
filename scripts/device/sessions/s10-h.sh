#!/usr/bin/env bash
# Session 10, call H: issue 17's conv table (fp16, cuDNN in the same run) and the VAE decode's conv total.
set -uo pipefail
out=$OUT
source scripts/device/vulkan-env.sh
export SDGEN_CACHE_DIR=/tmp/cacheh
timeout 500 bash scripts/device/bench-conv2d.sh > /tmp/bc.log 2>&1; echo "bench rc=$?"
grep -iE "geomean|geometric" $OUT/bench_conv2d_fp16.txt $OUT/bench_conv2d_fp32.txt | head -6
