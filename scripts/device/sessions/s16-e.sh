#!/usr/bin/env bash
# Session 16, call E (issues 19, 22), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/bench/attention_bench` and `slim-tree.sh on`: the accumulator-softmax attention's blocks swept on
# SD 1.5's 64x64 self-attention (BH 16, 4096 tokens, D 40) and SDXL's (BH 20, 4096, D 64; BH 40, 1024, D 64),
# each variant in its own process beside the engine's choice ("coop").
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
for shape in "16 4096 4096 40" "20 4096 4096 64" "40 1024 1024 64"; do
  echo "=== shape $shape"
  for v in cm2:64,2,4 cm2:128,2,4 cm2:128,1,4 cm2:64,2,8 cm2:64,1,8 cm2:128,2,8 cm2:32,2,4; do
    # shellcheck disable=SC2086
    timeout 60 ./build/default/bench/attention_bench $shape 20 coop "$v" 2>&1 | grep -vE "^\s*$" | tail -2
  done
done
