#!/usr/bin/env bash
# Session 25, call G (carry .gl .carry .whl; after `scripts/device/pack.sh build/default/bench/linear_bench
# build/default/tests/model_check/sdgen_model_check`): rowCoord's two divisions by runtime values (d2, d1) as a
# wide multiply and a shift by magic pairs the host puts in GEMM header words 28-31 (call F: pushing the
# parameter words alone gave the step ~0.05 ms, so the epilogue's cost per store is its arithmetic, not its
# parameter loads). linear_bench on call E's plain shapes (E: 8192 x 32 x 1280 23.5 us, 15.0 with the store
# address hoisted), sdgen_model_check fp16 (the coop kernels' epilogues against torch), one profile.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 120 ./build/default/bench/linear_bench scripts/device/sessions/s25-e-plain.json --rounds 10 \
  coop:64,64,32,2,2 coop:128,128,32,4,2 2>&1 | cut -c1-140 | tee "$OUT/epilogue.txt"
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/sd15/refs/sd15_random --model /tmp/sd15/sd15-random \
  --precision fp16 > "$OUT/model-check.txt" 2>&1; echo "model check rc=$?"; grep -E "rel err|launches|within" "$OUT/model-check.txt"
./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
  --json "$OUT/profile.json" > "$OUT/profile.txt" 2>&1; echo "profile rc=$?"
grep -A6 'totals of unet' "$OUT/profile.txt"; grep -A6 'totals of vae' "$OUT/profile.txt" | grep -E "conv|total"
