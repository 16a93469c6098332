#!/usr/bin/env bash
# Session 54, call D (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# issue 18's residency bench on the session's final code, whose kernel caches (SPIR-V, the driver's pipeline cache,
# Slang modules) are now checksummed: warm runs must still compile nothing (a warm run's kernel compile ~0.1-0.2 s)
# and load as fast; the sizes of what the checksums cover.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SECONDS=0
bash scripts/device/residency.sh --runs 2 --cold-runs 3 > /dev/null 2>&1
echo "== residency rc $? at $SECONDS s"; grep "^cold run\|^folder run\|^single_file run\|^diffusers" "$OUT/residency.log"
cat "$OUT/h100-residency.json"
# The caches the warm runs read (the last cold run's folder), with their sizes: what the checksums cover
for d in /tmp/sdgen-cold-cache-*; do
  echo "== $d: spirv $(ls "$d/spirv" | wc -l) files $(du -sh "$d/spirv" | cut -f1), slang-modules $(du -sh "$d/slang-modules" | cut -f1)"
  ls -la "$d" | grep pipelines
done
# The cache tests on the NVIDIA driver, validation on
export SDGEN_VALIDATION=1
./build/default/tests/vulkan_tests --gtest_filter='CompileCache*:KernelPrepare*:SlangModule*:SlangInProcess*' \
  > "$OUT/cache-tests.log" 2>&1; echo "== cache tests rc $?"
grep -E "^\[  (PASSED|FAILED) |^\[==========\]|OK \]|FAILED \]" "$OUT/cache-tests.log" | head -30
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/cache-tests.log"
