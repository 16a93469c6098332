#!/usr/bin/env bash
# Session 25, call A, carry .gl .carry .whl, after `scripts/device/pack.sh build/default/bench/linear_bench`:
# (1) sdgen --profile-conv --json of SD 1.5 fp16 (every launch of a step, for the linear layers' own times);
# (2) linear_bench over scripts/device/sessions/s25-a-ksweep.json: the UNet's M x N with K swept, to split a
# short-K GEMM's time into a fixed part (launch, epilogue) and a per-32-deep-slice part.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/python-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
export SDGEN_CACHE_DIR=/tmp/sdgen-cache
for r in 1 2; do
  ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 --json $OUT/profile-$r.json > $OUT/profile-$r.txt 2>&1
  grep -A7 "totals of unet" $OUT/profile-$r.txt
done
timeout 300 ./build/default/bench/linear_bench scripts/device/sessions/s25-a-ksweep.json --rounds 10 \
  auto coop:64,64,32,2,2 coop:128,128,32,4,2 coop:128,64,32,2,2 2>&1 | cut -c1-140 | tee $OUT/ksweep.txt
