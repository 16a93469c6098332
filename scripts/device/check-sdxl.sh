#!/usr/bin/env bash
# Issue 22 on the GPU machine, carry .gl .carry .whl, after
#   scripts/device/pack.sh build/default/app/sdgen build/default/tests/model_check/sdgen_model_check
#   scripts/device/slim-tree.sh on
# The full-size SDXL base 1.0 architecture with random weights (tests/reference/make_sdxl_random.py: fp16
# folder; torch references in fp32 and fp16; diffusers' UNet step at 1024², batch 2, eager and as a CUDA graph;
# --image-runs diffusers images at 1024² with their peak memory), then sdgen_model_check on the folder (every
# component against torch, fp32 ≤ 1e-3 and fp16 ≤ 1e-2; sdgen's replayed 1024² step, batch 2) and sdgen's own
# 1024² images (20 steps, Euler, CFG 5, fp16, -v: step times and memory; nvidia-smi polled for the peak).
# Estimated 6-8 min (build and save ~1.5 min on the CPU, references and timings ~2 min, the checks ~2 min).
#   run: bash scripts/device/check-sdxl.sh [IMAGES]   -> $OUT/sdxl-check.json, sdxl_random.json, *.log
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
out=${OUT:-/tmp/check-sdxl-out}; images=${1:-3}
w=/tmp/sdxl; mkdir -p "$out" "$w"
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader || true
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" --image-runs "$images" 2>&1 | tee "$out/make.log"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
cp "$w/refs/sdxl_random.json" "$out/"
./build/default/tests/model_check/sdgen_model_check --refs "$w/refs/sdxl_random" --model "$w/models/sdxl-random" \
  --precision both --repetitions 30 --json "$out/sdxl-check.json" 2>&1 | tee "$out/check.log"
status=${PIPESTATUS[0]}
# sdgen's images: the first compiles and tunes, the rest are the measurement; nvidia-smi's peak for the process.
( peak=0; while sleep 0.05; do u=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
    [ "${u:-0}" -gt "$peak" ] && peak=$u && echo "$peak" > "$w/smi-peak"; done ) &
poller=$!
for i in $(seq 0 "$images"); do
  ./build/default/app/sdgen -m "$w/models/sdxl-random" -p "a photo of an astronaut riding a horse on the moon" \
    -n blurry -W 1024 -H 1024 --steps 20 --sampler euler --cfg-scale 5 -s $((2 + i)) -o "$w/sdgen-$i.png" -v \
    > "$out/sdgen-$i.log" 2>&1 || status=1
done
kill "$poller" 2>/dev/null
echo "nvidia-smi peak while sdgen ran: $(cat "$w/smi-peak" 2>/dev/null) MiB" | tee -a "$out/check.log"
grep -h -E "denoise|decode|model load|peak|shared arena|weights" "$out"/sdgen-*.log | tail -20
exit "$status"
