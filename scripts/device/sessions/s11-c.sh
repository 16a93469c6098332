#!/usr/bin/env bash
# Session 11, call C (issue 24, determinism on the H100): Determinism.SameSeedSameBitsForEverySampler (13 samplers,
# two generations per process must be bit-identical) in two processes with separate kernel/tuning caches, each
# writing one FNV-1a digest per sampler; the digest files must be identical. Carry .gl .carry tests/data/tiny-sd1.
set -uo pipefail
source scripts/device/vulkan-env.sh
[ -e "$(dirname "$PWD")/main" ] || true
mkdir -p /work && [ -e /work/main ] || ln -sfn "$PWD" /work/main   # SDGEN_SOURCE_DIR of the build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for run in 1 2; do
  SDGEN_CACHE_DIR=/tmp/cache-det-$run SDGEN_DETERMINISM_DIGESTS=$OUT/digests.$run timeout 250 \
    ./build/default/tests/models/models_tests --gtest_filter=Determinism.SameSeedSameBitsForEverySampler > $OUT/det$run.log 2>&1
  echo "run $run rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure|precision|device" $OUT/det$run.log | head -5
done
wc -l $OUT/digests.1 $OUT/digests.2; cmp $OUT/digests.1 $OUT/digests.2 && echo SAME-BITS-ACROSS-PROCESSES
head -3 $OUT/digests.1
# The built-in model in fp16 (tensor-core kernels, autotune on), euler_a, default size: two processes sharing the
# kernel/tuning cache, then two with fresh caches each (the autotune measures again: its choice must not change bits).
for run in 1 2; do
  SDGEN_CACHE_DIR=/tmp/cache-shared timeout 120 ./build/default/app/sdgen --prompt "a lighthouse at dusk" -s 7 \
    --sampler euler_a --precision fp16 -o $OUT/shared$run.png > $OUT/shared$run.log 2>&1; echo "shared $run rc=$?"
  SDGEN_CACHE_DIR=/tmp/cache-fresh-$run timeout 120 ./build/default/app/sdgen --prompt "a lighthouse at dusk" -s 7 \
    --sampler euler_a --precision fp16 -o $OUT/fresh$run.png -v > $OUT/fresh$run.log 2>&1; echo "fresh $run rc=$?"
done
md5sum $OUT/shared1.png $OUT/shared2.png $OUT/fresh1.png $OUT/fresh2.png
grep -h "conv autotune" $OUT/fresh1.log $OUT/fresh2.log
