#!/usr/bin/env bash
# Tile sweep of the tensor-core attention kernel on the GPU machine (design work; the neutral numbers come
# from bench-tensor-core.sh): the attention tests with validation on, then each SD 1.5 self-attention shape
# (and SDXL's head dim 64) with the given variants, GPU timestamps, median of 10 rounds x 10 dispatches.
#   scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/bench/attention_bench
#   run: [SHAPES="BH,Lq,Lk,D ..."] bash scripts/device/attention-sweep.sh coop coop/expr coop:32,2,4 ...
#        (carry .gl .carry; the full output comes back as sweep.log)
set -uo pipefail
source scripts/device/vulkan-env.sh
out=${OUT:-/tmp}
SDGEN_VALIDATION=1 timeout 300 ./build/default/tests/ops/ops_tests \
  --gtest_filter="${SDGEN_TEST_FILTER:-*Attention*}" > "$out/ops_tests.log" 2>&1
grep -E "^\[  (PASSED|FAILED) |FAILED|\[vulkan validation\]" "$out/ops_tests.log" | head -20
shapes=${SHAPES:-"16,4096,4096,40 16,4096,77,40 16,1024,1024,80 16,1024,77,80 16,256,256,160 40,4096,4096,64"}
for shape in $shapes; do
  echo "== $shape"
  ./build/default/bench/attention_bench ${shape//,/ } 10 "$@" 2>&1 | cut -c1-230
done | tee "$out/sweep.log"
