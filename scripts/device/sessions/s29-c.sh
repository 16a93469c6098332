#!/usr/bin/env bash
# Session 29, call C (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). A ResNet's shortcut
# product recorded right after its conv1, on the scratch's side() memory, its computed input stored by a node of
# its own (SDGEN_SHORTCUT_BESIDE=0: after norm2 on the main scratch, as before): its launches share conv1's barrier
# interval. Issue 19's end-to-end bench (diffusers in this call), then the step's GPU time with and without the
# change, alternating (~6 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/e2e
timeout 300 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
tail -14 "$OUT/e2e.log"
for v in base-r1 new-r1 base-r2 new-r2 base-r3 new-r3; do
  case ${v%-r*} in base) e="SDGEN_SHORTCUT_BESIDE=0";; new) e="SDGEN_SHORTCUT_BESIDE=1";; esac
  env $e timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
    --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$v.txt" 2>&1
  echo "$v rc=$?: $(grep -E 'fp16 +unet step' "$OUT/check-$v.txt" | tr -s ' ' | tr '\n' ' ')"
done
grep -E "unet|vae|max" "$OUT/check-new-r1.txt" | head -12
rm -f "$OUT"/check-*-r2.txt "$OUT"/check-*-r3.txt
