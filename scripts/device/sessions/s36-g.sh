#!/usr/bin/env bash
# Session 36, call G (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). SD 1.5's fp16 parity
# against torch with the direct conv's fp16 halo (the VAE decoder's conv_out), the committed code.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
rm -rf /tmp/e2e
timeout 120 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
timeout 90 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
  --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/sd15-check.txt" 2>&1
echo "sd15 rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/sd15-check.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
grep -E "rel err" "$OUT/sd15-check.txt" | tr -s ' ' | sed 's/^/    /'
