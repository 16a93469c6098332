#!/usr/bin/env bash
# Runs on the GPU machine from the repository root: the SD 1.5 conv table of `sdgen --bench-conv2d` in fp32 and
# fp16 with cuDNN as the reference in the same run (docs/perf.md). Pack first (on the build machine):
#   scripts/device/pack.sh build/default/app/libsdgen_cudnn_reference.so
# and carry .gl and .carry. Extra arguments go to sdgen (e.g. --algo auto). Writes $OUT/bench_conv2d_{fp32,fp16}.*
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/bench-out}
mkdir -p "$OUT"
source scripts/device/vulkan-env.sh
source scripts/device/cuda-env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
status=0
for p in fp32 fp16; do
  ./build/default/app/sdgen --bench-conv2d --precision "$p" --reference cudnn --json "$OUT/bench_conv2d_$p.json" "$@" \
    2>&1 | tee "$OUT/bench_conv2d_$p.txt" || status=1
done
exit $status
