#!/usr/bin/env bash
# Session 32, call D (carry .gl .carry .whl after `scripts/device/pack.sh build/default/bench/attention_bench` and
# `scripts/device/slim-tree.sh on`). Call C found SDXL's step 0.5 ms slower with 8 subgroups: the
# accumulator-softmax attention's tiles at head dimension 64 (SDXL's 64^2 and 32^2 levels, SD 2.x's 96^2),
# and 128, with their registers.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
B=./build/default/bench/attention_bench
SDGEN_PIPELINE_STATS=1 timeout 100 $B 20 4096 4096 64 8 cm2:64,2,4 cm2:64,1,4 cm2:64,1,8 cm2:32,1,8 cm2:64,1,16 cm2:32,2,4 \
  cm2:64,2,4 --reps 10 > "$OUT/bench-d64.txt" 2> "$OUT/bench-d64-stats.txt"
cut -c1-200 "$OUT/bench-d64.txt"
grep -oE "pipeline stats [^[]*|Register Count=[0-9]+|Shared Memory Size=[0-9]+" "$OUT/bench-d64-stats.txt" | paste -sd' ' | sed 's/pipeline stats/\n/g' | head -20
timeout 60 $B 40 1024 1024 64 8 cm2:64,1,4 cm2:64,1,8 cm2:32,1,8 cm2:32,1,4 --reps 10 | cut -c1-200
timeout 60 $B 40 1024 77 64 8 cm2:32,1,4 cm2:32,1,8 --reps 10 | cut -c1-200
timeout 60 $B 20 4096 77 64 8 cm2:32,2,4 cm2:32,1,8 cm2:32,1,4 --reps 10 | cut -c1-200
timeout 60 $B 10 9216 9216 64 8 cm2:64,2,4 cm2:64,1,8 --reps 5 | cut -c1-200
timeout 60 $B 16 4096 4096 128 8 cm2:64,2,4 cm2:64,1,4 cm2:64,1,8 cm2:32,1,8 --reps 5 | cut -c1-200
timeout 60 $B 16 4096 4096 40 8 cm2:64,2,4 cm2:64,1,8 --reps 10 | cut -c1-200
