#!/usr/bin/env bash
# Needs scripts/device/sessions/s31-e-split-penalty-rejected.patch applied (the knob was not kept).
# Session 31, call E (carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). The conv tuner
# ranks split-K candidates with a penalty for the barrier interval their sum launch adds in a step
# (SDGEN_AUTOTUNE_SPLIT_PENALTY_US, applied at ranking: one cache for all values). The step's GPU time with
# penalties 0 and 8 us alternating, after one run that fills the cache.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
export SDGEN_CACHE_DIR=/tmp/cache-s31e
for v in warm p8-r1 p0-r1 p8-r2 p0-r2; do
  p=${v%-r*}; p=${p#p}; [ "$v" = warm ] && p=0
  SDGEN_AUTOTUNE_SPLIT_PENALTY_US=$p timeout 100 ./build/default/tests/model_check/sdgen_model_check \
    --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step GPU' "$OUT/check-$v.txt" | tr -s ' ' | sed 's/.*median/median/') $(grep -oiE '[0-9]+ (launches|barriers)' "$OUT/check-$v.txt" | paste -sd' ')"
  grep -E "unet +rel err" "$OUT/check-$v.txt" | tr -s ' ' | sed 's/^/    /'
done
rm -f "$OUT"/check-*-r2.txt "$OUT"/check-warm.txt
