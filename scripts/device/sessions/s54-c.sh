#!/usr/bin/env bash
# Session 54, call C (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`): the
# 128-channel 3x3 conv on `coop 128x128 f16acc halo` over image sizes from 128 to 1024 tiles of 128x128 (call B:
# 0.2621 ms at 512^2 = 2048 tiles, 0.9666 at 1024^2 = 8192: a + b tiles with a ~27 us per launch): the tuner's time
# of that candidate per size, one process each, cuDNN beside, and each size's tuned row.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
for hw in 128 256 384 512 640 768 1024 512; do
  rm -rf /tmp/c54c
  SDGEN_CACHE_DIR=/tmp/c54c timeout 120 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
    --reference cudnn --shape 1,128,128,$hw,$hw,3,1 > /tmp/row.txt 2>&1
  { echo "== $hw"; cat /tmp/row.txt; } >> "$OUT/sizes.txt"
  echo "== $hw^2 ($(( hw * hw / 128 )) tiles): tuned $(awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c54c/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:3]]"
done
