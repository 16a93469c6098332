#!/usr/bin/env bash
# Session 54, call G (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`): issue 17's
# fp32 table on today's code (fresh cache, cuDNN beside; the results file was session 45's).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
rm -rf /tmp/c; SDGEN_CACHE_DIR=/tmp/c timeout 240 ./build/default/app/sdgen --bench-conv2d --precision fp32 \
  --reference cudnn --json "$OUT/h100-bench-conv2d-fp32.json" > "$OUT/h100-bench-conv2d-fp32.txt" 2>&1
echo "table rc=$? at $SECONDS s"
python3 -c "
import json; d = json.load(open('$OUT/h100-bench-conv2d-fp32.json'))
print('geomean', d.get('geomean_ratio_vs_cudnn_best'))
print(max((r['ratio_vs_cudnn'], r['layer']) for r in d['rows'] if r['algo'] == 'tuned'))"
