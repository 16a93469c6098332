#!/usr/bin/env bash
# Session 17, call D (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/bench/attention_bench`, the shaders of call C's base in .carry/shaders-base and three variants of
# flash_coop2.slang in .carry/shaders-v1..v3 (kFlashCoop2Ones, kFlashCoop2LazyRescale = 1 0, 1 1, 0 1) and
# `slim-tree.sh on`: which of the two changes of call C pays where (call C: D 40 0.272 -> 0.257 ms, D 64 0.48 ->
# 0.64 with both). The accumulator-softmax tests with validation on v1 and v2 (call C's failure: the ones mask
# was written by 64 invocations only; one-subgroup tiles have 32).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
for v in v1 v2; do
  SDGEN_SHADER_DIR="$PWD/.carry/shaders-$v" SDGEN_CACHE_DIR=/tmp/cache-t-$v SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests \
    --gtest_filter='*AccumulatorSoftmax*:*TensorCoreKernel*:*SpecializedHeadDims*' > "$OUT/ops-$v.log" 2>&1
  echo "ops_tests $v rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/ops-$v.log" | head -4
  grep -m2 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops-$v.log"
done
for shape in "16 4096 4096 40" "20 4096 4096 64" "16 256 256 160" "16 1024 1024 80"; do
  for v in base v1 v2 v3 base v1 v2 v3; do
    # shellcheck disable=SC2086
    r=$(SDGEN_SHADER_DIR="$PWD/.carry/shaders-$v" SDGEN_CACHE_DIR="/tmp/cache-$v" timeout 60 ./build/default/bench/attention_bench $shape 20 coop 2>&1 | grep -vE "^\s*$" | tail -1 | cut -c1-90)
    echo "$shape $v: $r"
  done
done | tee "$OUT/attention-bench.txt"
