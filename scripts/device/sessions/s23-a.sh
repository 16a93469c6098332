#!/usr/bin/env bash
# Runs with scripts/device/sessions/s23-ab-winograd-fused-rejected.patch applied (the fused kernel and its knobs SDGEN_WINOGRAD_ORDER,
# SDGEN_COOP_WINOGRAD_HALF, SDGEN_COOP_WINOGRAD_TILE); the tree without it has neither.
# Session 23, call A (issue 17), carry .gl .carry, after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so`: coop-winograd fused (Winograd F(2,3) with the output transform in
# the GEMM's accumulators, gemm_coop.slang A_MODE 4). Its float64 tests with validation; then, per SD 1.5 3x3 row,
# coop beside coop-winograd in its variants (loop order 1 / 0, fp16 sums within a slice, tiles 128x64 / 64x32),
# one process each; then the fp16 conv table with cuDNN in the same run.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
F='Conv/ConvTest.CoopWinograd*:Conv/ConvTest.CoopMatrix*:GemmCoopRule.*:ConvCandidates.*'
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests --gtest_filter="$F" > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops.log" | tr '\n' ' ')"
grep -E "FAILED  \]|Failure|error" "$OUT/ops.log" | head -8
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
grep -E "max relative error coop-winograd|coop-winograd f16" "$OUT/ops.log" | head -4
run() {  # label, env..., then shape
  local label=$1 shape=$2; shift 2
  env "$@" timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --shape "$shape" \
    --algo "${ALGO:-coop-winograd}" 2>&1 | grep -E "^shape .*fp16 (coop|coop-winograd) " | cut -c1-150 | sed "s/^shape/$label/"
}
for s in 1,512,512,256,256,3,1 1,256,256,512,512,3,1 1,128,128,512,512,3,1 1,512,512,128,128,3,1 \
         2,320,320,64,64,3,1 2,640,320,64,64,3,1 2,640,640,32,32,3,1; do
  echo "== $s"
  ALGO=coop run coop $s X=1
  run cw-o1 $s SDGEN_WINOGRAD_ORDER=1
  run cw-o0 $s SDGEN_WINOGRAD_ORDER=0
  run cw-half $s SDGEN_COOP_WINOGRAD_HALF=1
  run cw-128x64 $s SDGEN_COOP_WINOGRAD_TILE=128x64
  run cw-64x32 $s SDGEN_COOP_WINOGRAD_TILE=64x32
done
timeout 200 ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn \
  --json "$OUT/bench_conv2d_fp16.json" > "$OUT/bench_conv2d_fp16.txt" 2>&1
echo "table rc=$?"; grep -iE "geomean|geometric" "$OUT/bench_conv2d_fp16.txt" | head -5
