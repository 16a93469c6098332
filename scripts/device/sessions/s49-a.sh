#!/usr/bin/env bash
# Session 49, call A (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): session 48's call D
# (s48-d.sh: the time-based warm-up from a cold GPU; the two rows over 2x beside cuDNN in four processes on one
# cache), then each launch's time of coop-winograd-rows on 128 and 256 channels at 512^2, and the GPU's throttle
# reasons while cuDNN runs the 128-channel row.
set -uo pipefail
bash scripts/device/sessions/s48-d.sh
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
  SDGEN_BENCH_KERNEL_TIMES=1 timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo coop-winograd-rows --shape $s > /tmp/k.txt 2>&1
  { echo "== kernels $s"; cat /tmp/k.txt; } >> "$OUT/rows.txt"
  grep -E '^kernel|coop-winograd-rows' /tmp/k.txt | head -20
done
nvidia-smi --query-gpu=clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv,noheader -lms 100 \
  > "$OUT/smi.txt" 2>&1 &
SMI=$!
for i in 1 2; do
  timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo coop --reference cudnn \
    --shape 1,128,128,512,512,3,1 --reps 200 2>&1 | awk '$4 == "coop" {print "coop+cudnn x200", $5, "cuDNN", $15}'
done
kill $SMI
sort "$OUT/smi.txt" | uniq -c | sort -rn | head -15
