#!/usr/bin/env bash
# Session 17, call C (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/bench/attention_bench build/default/tests/model_check/sdgen_model_check`, the previous shaders in
# .carry/shaders-base and `slim-tree.sh on`: the accumulator-softmax attention with the softmax denominator
# summed by the P V products (V's free padding column of ones) and O rescaled only where a row's maximum grew.
# 1. the attention tests with validation (float64 references); 2. attention_bench, previous and new shaders
# alternating (each its own process); 3. --profile-conv of SD 1.5 with the new shaders and sdgen_model_check's
# parity + replayed step.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*Attention*' > "$OUT/ops-attention.log" 2>&1
echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/ops-attention.log" | head
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops-attention.log"
for shape in "16 4096 4096 40" "16 1024 1024 80" "16 256 256 160" "20 4096 4096 64" "40 1024 1024 64"; do
  for v in base new base new; do
    d="$PWD/shaders"; [ $v = base ] && d="$PWD/.carry/shaders-base"
    # shellcheck disable=SC2086
    r=$(SDGEN_SHADER_DIR="$d" SDGEN_CACHE_DIR="/tmp/cache-$v" timeout 60 ./build/default/bench/attention_bench $shape 20 coop 2>&1 | grep -vE "^\s*$" | tail -1)
    echo "$shape $v: $r"
  done
done | tee "$OUT/attention-bench.txt"
source scripts/device/python-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
SDGEN_CACHE_DIR=/tmp/cache-new ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 \
  --precision fp16 --json "$OUT/profile-new.json" > /tmp/profile-new.txt 2>&1
echo "profile rc=$?"; grep -A7 "totals of unet" /tmp/profile-new.txt
./build/default/tests/model_check/sdgen_model_check --refs /tmp/sd15/refs/sd15_random --model /tmp/sd15/sd15-random \
  --precision fp16 > "$OUT/model-check.txt" 2>&1
echo "model_check rc=$?"; tail -15 "$OUT/model-check.txt"
