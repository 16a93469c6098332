#!/usr/bin/env bash
# Session 29, call D (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Issue 19's end-to-end
# bench twice with the ResNet shortcuts beside conv1 (call C: one run, 11.88 ms against the CUDA graph's 11.90),
# each run with its own model and diffusers timings (~5 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
for r in 1 2; do
  rm -rf /tmp/e2e
  timeout 230 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e run $r rc=$?"
  tail -11 "$OUT/e2e.log"
  for f in h100-e2e.json h100-e2e-details.json e2e.log; do mv "$OUT/$f" "$OUT/run$r-$f"; done
done
