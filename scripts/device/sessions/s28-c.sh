#!/usr/bin/env bash
# Session 28, call C (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Since call B: the
# few-row kernel reads whole 128-byte rows per quarter warp for wide outputs (the time projections: call B read
# 52 MB in 28.7 us, every lane another row). Its tests with validation; then issue 19's end-to-end bench on the
# default code (its --profile-conv gives the time MLP's launches), whose sdgen_model_check now times the step as the
# pipeline records it (the cross-attention K/V projections of the text once per image, before the steps); then
# the same UNet check with the projections inside the step (SDGEN_CHECK_KV_IN_STEP=1, as before session 28)
# (~7 min). The reference (diffusers) is measured in this call.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 100 ./build/default/tests/ops/ops_tests --gtest_filter='*FewRowKernel*' > "$OUT/tests.log" 2>&1
trc=$?; echo "ops tests rc=$trc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|max \||FAILED" "$OUT/tests.log" | head -6
[ "$trc" = 0 ] || export SDGEN_GEMV=0
rm -rf /tmp/e2e
timeout 400 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$? (SDGEN_GEMV=${SDGEN_GEMV:-})"
tail -16 "$OUT/e2e.log"
cp /tmp/e2e/profile.json "$OUT/profile.json" 2>/dev/null
python3 -c "
import json; g=json.load(open('/tmp/e2e/profile.json'))['graphs'][0]
print([(x['label'], round(x['ms']*1000, 1)) for x in g['others'] if 'time' in x['label']])" 2>&1
SDGEN_CHECK_KV_IN_STEP=1 timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
  --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-kv-in-step.txt" 2>&1
echo "kv-in-step rc=$?"; grep -E "unet" "$OUT/check-kv-in-step.txt"
