#!/usr/bin/env bash
# Written in session 26 for the next session's second call. Carry .gl .carry .whl after
# `scripts/device/pack.sh build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so`
# and `scripts/device/slim-tree.sh on`: issue 19's end-to-end bench on the code of call A's winner (pass
# SDGEN_GROUP_NORM=rows in front of this script if the group norm over pixel blocks lost), then issue 17's
# `--bench-conv2d --reference cudnn` table in fp16 (its fp32 table did not change since session 23). ~8 min.
set -uo pipefail
timeout 330 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
tail -25 "$OUT/e2e.log"
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
timeout 200 ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn \
  --json "$OUT/h100-bench-conv2d-fp16.json" > "$OUT/bench-conv2d-fp16.txt" 2>&1; echo "bench-conv2d rc=$?"
tail -40 "$OUT/bench-conv2d-fp16.txt"
