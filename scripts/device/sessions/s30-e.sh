#!/usr/bin/env bash
# Session 30, call E (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/model_check/sdgen_model_check`
# and `scripts/device/slim-tree.sh on`). With fp16 split-K partials, knob variants of the step (GPU time from
# sdgen_model_check, two rounds alternating): the split-K rule's target of 640 workgroups doubled
# (SDGEN_SPLIT_TARGET=1280), its 8 slices per part halved (SDGEN_SPLIT_MIN_SLICES=4), and the one-launch group norm
# bounded at 32768 elements per group (SDGEN_GROUP_NORM_MAX=32768: the 32^2 level's 1920- and 1280-channel
# concatenations take the pixel-block tiles) (~5 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for r in 1 2; do
  for v in base target1280 slices4 norm32k; do
    case $v in
      base) e="SDGEN_SPLIT_TARGET=";;
      target1280) e="SDGEN_SPLIT_TARGET=1280";;
      slices4) e="SDGEN_SPLIT_MIN_SLICES=4";;
      norm32k) e="SDGEN_GROUP_NORM_MAX=32768";; esac
    env $e timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
      --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v-r$r.txt" 2>&1
    echo "$v r$r rc=$?: $(grep -E 'fp16 +unet step' "$OUT/check-$v-r$r.txt" | tr -s ' ' | sed 's/.*median/median/' | tr '\n' ' ')"
  done
done
grep -h -E "unet +rel err" "$OUT"/check-*-r1.txt | tr -s ' '
rm -f "$OUT"/check-*-r2.txt
