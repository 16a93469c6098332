#!/usr/bin/env bash
# Session 11, call D (issue 24): why call C's digests differed across processes. The determinism test twice more
# with one shared kernel/tuning cache (the second process reads the first's tuned plans), and twice with the
# autotune off (the rule); each pair's digest files must be identical.
set -uo pipefail
source scripts/device/vulkan-env.sh
mkdir -p /work && [ -e /work/main ] || ln -sfn "$PWD" /work/main   # SDGEN_SOURCE_DIR of the build
for mode in shared off; do
  for run in 1 2; do
    if [ $mode = shared ]; then export SDGEN_CACHE_DIR=/tmp/cache-det-shared; unset SDGEN_AUTOTUNE
    else export SDGEN_CACHE_DIR=/tmp/cache-det-off-$run SDGEN_AUTOTUNE=0; fi
    SDGEN_DETERMINISM_DIGESTS=$OUT/$mode.$run timeout 250 ./build/default/tests/models/models_tests \
      --gtest_filter=Determinism.SameSeedSameBitsForEverySampler > $OUT/$mode$run.log 2>&1
    echo "$mode $run rc=$?"
  done
  cmp $OUT/$mode.1 $OUT/$mode.2 && echo "$mode: SAME-BITS-ACROSS-PROCESSES"
done
