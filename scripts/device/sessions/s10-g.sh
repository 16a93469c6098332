#!/usr/bin/env bash
# Session 10: results file refresh with the large-GEMM tile (256x256, fp16 in 2048-deep chunks) and EDGE 0; profile; parity.
set -uo pipefail
out=$OUT
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
SDGEN_TEST_FILTER='AttentionCoopTiles.*:*AccumulatorSoftmax*:*CoopMatrixKernelWhereSupported*:GemmCoopRule.*:*RawHalf*:*LinearGeglu*:*GemmSplit*' \
  ROUNDS=20 timeout 400 bash scripts/device/bench-tensor-core.sh auto > /tmp/btc.txt 2>&1
grep -E "PASSED|FAILED|validation" /tmp/btc.txt | head -5; grep -E "square 4096|self 64x64" $out/bench.log | cut -c1-160 | head -6
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
export SDGEN_CACHE_DIR=/tmp/sdcache
for i in 1 2; do timeout 150 ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 --json $out/profile_conv_sd15_fp16.json > /tmp/profile.txt 2>&1; done
grep -iE "autotune" /tmp/profile.txt | head -2; grep -A6 "totals of unet" /tmp/profile.txt | head -7
timeout 150 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/sd15/refs/sd15_random --model /tmp/sd15/sd15-random --precision fp16 > /tmp/check.log 2>&1
echo "check rc=$?"; grep -E "rel err|step" /tmp/check.log | head -8
ls $out
