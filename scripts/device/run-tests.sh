#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/device/pack.sh was carried along with
# .gl (Vulkan loader) and .carry (bundle + validation layers). Runs every GoogleTest binary with validation on.
set -uo pipefail
source scripts/device/vulkan-env.sh
export SDGEN_VALIDATION=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
./build/default/app/sdgen --list-devices 2>&1 | grep -v "vulkan validation"
status=0
for t in build/default/tests/*_tests build/default/tests/*/*_tests; do
  echo "=== $t"
  "$t" "$@" > "${OUT:-/tmp}/$(basename "$t").log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|tests? (ran|passed)" "${OUT:-/tmp}/$(basename "$t").log"
  grep -m3 -o "\[vulkan validation\].\{0,400\}" "${OUT:-/tmp}/$(basename "$t").log"
done
echo "=== second run of the demo (kernel cache must hit)"
./build/default/app/sdgen --demo | grep -E "kernels:|ok"
exit $status
