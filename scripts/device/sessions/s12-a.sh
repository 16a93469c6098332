#!/usr/bin/env bash
# Session 12, call A: (issue 19) where the non-conv time of the SD 1.5 fp16 step and VAE decode goes
# (`--profile-conv` JSON now lists every non-conv launch) and what a PNG write costs per image in a batch;
# (issue 24) determinism across processes with fresh tuning caches after the tie margin of the autotune.
# Carry .gl .carry .whl tests/data/tiny-sd1.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
mkdir -p /work && [ -e /work/main ] || ln -sfn "$PWD" /work/main   # SDGEN_SOURCE_DIR of the build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
export SDGEN_CACHE_DIR=/tmp/sdcache
./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
  --json $OUT/profile.json > $OUT/profile.txt 2>&1; echo profile rc=$?
./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
  --json $OUT/profile2.json > $OUT/profile2.txt 2>&1; echo profile2 rc=$?
grep -A7 "totals of" $OUT/profile2.txt
./build/default/app/sdgen -m /tmp/sd15/sd15-random -p "a lighthouse at dusk" -s 42 -W 512 -H 512 --steps 20 \
  --cfg-scale 7 --sampler euler --precision fp16 --batch-count 6 -o /tmp/img.png -v 2>&1 | \
  while IFS= read -r l; do echo "$(date +%s.%N) $l"; done > $OUT/batch.log
grep -E "wrote|timings|load|compile|encode|denoise|decode|png" $OUT/batch.log | cut -c1-150
unset SDGEN_CACHE_DIR
for run in 1 2; do
  SDGEN_CACHE_DIR=/tmp/cache-det-$run SDGEN_DETERMINISM_DIGESTS=$OUT/digests.$run timeout 250 \
    ./build/default/tests/models/models_tests --gtest_filter=Determinism.SameSeedSameBitsForEverySampler > $OUT/det$run.log 2>&1
  echo "det run $run rc=$?"
done
cmp $OUT/digests.1 $OUT/digests.2 && echo SAME-BITS-ACROSS-PROCESSES-FRESH-CACHES
for run in 1 2 3; do
  SDGEN_CACHE_DIR=/tmp/cache-fresh-$run timeout 120 ./build/default/app/sdgen -m tests/data/tiny-sd1 --prompt "a lighthouse at dusk" -s 7 \
    --sampler euler_a --precision fp16 -o $OUT/fresh$run.png -v > $OUT/fresh$run.log 2>&1; echo "fresh $run rc=$?"
done
md5sum $OUT/fresh*.png
