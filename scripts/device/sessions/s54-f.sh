#!/usr/bin/env bash
# Session 54, call F (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# SD 1.5's model check (random weights, fp16, its own fresh cache) on today's code, against diffusers/torch fp32.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SECONDS=0
timeout 200 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1
echo "make_sd15_random rc=$? at $SECONDS s"
rm -rf /tmp/c54f-m; SDGEN_CACHE_DIR=/tmp/c54f-m timeout 150 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$? at $SECONDS s"; grep -E "rel err|GPU time|limit|PASS|FAIL" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
