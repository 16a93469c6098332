#!/usr/bin/env bash
# Session 55, call C (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# SD 1.5's `--profile-conv` (random weights, fp16, 512^2, fresh tuning each) with the split-K sums in a second launch
# and fused (SDGEN_SPLIT_FUSED_SUM=1), twice each, alternating: what the fused sum does to the UNet step's and the
# VAE decode's graphs, back to back as they run.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECONDS=0
timeout 170 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
echo "model at $SECONDS s"
for f in 0 1 0 1; do
  rm -rf /tmp/c55c
  SDGEN_SPLIT_FUSED_SUM=$f SDGEN_CACHE_DIR=/tmp/c55c timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/profile-fused$f-$SECONDS.json" > /tmp/profile.txt 2>&1
  echo "== fused $f rc=$? at $SECONDS s"
  python3 -c "
import json, glob
d = json.load(open(sorted(glob.glob('$OUT/profile-fused$f-*.json'))[-1]))
for g in d['graphs']:
    print('  ', g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
done
