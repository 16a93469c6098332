#!/usr/bin/env bash
# Session 29, call E (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). sdgen_model_check now
# prints the step's barriers (the intervals its launches overlap in): the UNet step with and without the
# shortcuts beside conv1 (SDGEN_SHORTCUT_BESIDE=0), for the next session's work on barrier intervals (~2 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in base new; do
  case $v in base) e="SDGEN_SHORTCUT_BESIDE=0";; new) e="SDGEN_SHORTCUT_BESIDE=1";; esac
  env $e timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
    --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ')"
done
