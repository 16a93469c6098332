#!/usr/bin/env bash
# Runs with scripts/device/sessions/s23-ab-winograd-fused-rejected.patch applied (the fused kernel and its knobs SDGEN_WINOGRAD_ORDER,
# SDGEN_COOP_WINOGRAD_HALF, SDGEN_COOP_WINOGRAD_TILE); the tree without it has neither.
# Session 23, call B (issue 17), carry .gl .carry, after `scripts/device/pack.sh build/default/tests/ops/ops_tests`:
# coop-winograd fused with the V sums deferred to the slice's store (call A's kernel summed the four patch words
# where they were loaded, so every slice waited for its loads: 4x slower than coop). Tests with validation; coop
# beside the coop-winograd variants per SD 1.5 row; the driver's register counts of the variants.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
F='Conv/ConvTest.CoopWinograd*:GemmCoopRule.*'
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests --gtest_filter="$F" > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops.log" | tr '\n' ' ')"
grep -E "FAILED  \]|Failure" "$OUT/ops.log" | head -8
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
grep -E "coop-winograd f16" "$OUT/ops.log" | head -2
run() {  # label, shape, env...
  local label=$1 shape=$2; shift 2
  env "$@" timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --shape "$shape" \
    --algo "${ALGO:-coop-winograd}" > /tmp/run.log 2>&1
  grep -E "^shape .*fp16 (coop|coop-winograd) " /tmp/run.log | cut -c1-150 | sed "s/^shape/$label/"
  grep "pipeline stats" /tmp/run.log | grep -v "filter\|input\|general" | head -2 | cut -c1-300
}
for s in 1,512,512,256,256,3,1 1,128,128,512,512,3,1 2,320,320,64,64,3,1 2,640,640,32,32,3,1; do
  echo "== $s"
  ALGO=coop run coop $s SDGEN_PIPELINE_STATS=1
  run cw-64x64 $s SDGEN_PIPELINE_STATS=1
  run cw-128x64 $s SDGEN_COOP_WINOGRAD_TILE=128x64 SDGEN_PIPELINE_STATS=1
  run cw-64x32 $s SDGEN_COOP_WINOGRAD_TILE=64x32 SDGEN_PIPELINE_STATS=1
  run cw-half $s SDGEN_COOP_WINOGRAD_HALF=1
  run cw-o0 $s SDGEN_WINOGRAD_ORDER=0
done
