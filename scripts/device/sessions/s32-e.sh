#!/usr/bin/env bash
# Ran with the refined rule plus masked key blocks on 4 subgroups below 2048 query rows (not kept: SD 1.5's step
# was measured in call B without it). Its SDGEN_FLASH_SUBGROUPS=4 rounds kept the new 32-key blocks at D 64 (the knob
# restores the old block order since): 4 subgroups of 32-key blocks, not the old tile.
# Session 32, call E (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/model_check/sdgen_model_check
# build/default/bench/attention_bench` and `scripts/device/slim-tree.sh on`). The rule refined after call D (D 64:
# 32-key blocks with 8 subgroups; masked key blocks take 8 subgroups from 2048 query rows): SD 2.x's 96^2
# self-attention and the refined tiles, then SDXL's 1024² step against the old tile (SDGEN_FLASH_SUBGROUPS=4).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
B=./build/default/bench/attention_bench
timeout 60 $B 10 9216 9216 64 8 cm2:64,2,4 cm2:32,1,8 cm2:32,2,4 --reps 5 | cut -c1-200
timeout 60 $B 10 9216 77 64 8 cm2:32,2,4 cm2:32,1,8 --reps 5 | cut -c1-200
timeout 60 $B 10 2304 2304 64 8 cm2:64,2,4 cm2:64,1,4 cm2:32,1,8 --reps 5 | cut -c1-200
w=/tmp/sdxl; mkdir -p "$w"
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "fp16: torch UNet step" "$OUT/make.log" | tail -1
for v in 8-r1 4-r1 8-r2; do
  SDGEN_FLASH_SUBGROUPS=${v:0:1} timeout 200 ./build/default/tests/model_check/sdgen_model_check --refs "$w/refs/sdxl_random" \
    --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step GPU' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /' | head -6
done
