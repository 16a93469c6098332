#!/usr/bin/env bash
# Session 46, call F (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`): how far cuDNN's time for the VAE's 256-channel 512^2 conv moves between
# processes (six processes on one tuning cache, ours beside), then SD 1.5's model check with today's defaults.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
(timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1; echo $? > /tmp/make15.rc) &
rm -rf /tmp/c46f
for i in 1 2 3 4 5 6; do
  SDGEN_CACHE_DIR=/tmp/c46f timeout 90 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
    --reference cudnn --shape 1,256,256,512,512,3,1 > "$OUT/row-$i.txt" 2>&1
  awk -v i=$i '$4 == "tuned" {print "process", i, "ours", $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20}' "$OUT/row-$i.txt"
done
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
rm -rf /tmp/c46f-m; SDGEN_CACHE_DIR=/tmp/c46f-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
