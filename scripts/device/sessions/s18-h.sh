#!/usr/bin/env bash
# Session 18, call I (issue 17; rejected, the shader reverted), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so build/default/tests/ops/ops_tests` and `slim-tree.sh on`: the direct
# conv with two output pixels per thread (conv_direct.slang, 128 threads) -- its tests with validation, the VAE
# conv_out row of --bench-conv2d against cuDNN (twice), and the SD 1.5 profile's decode.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 SDGEN_CACHE_DIR=/tmp/cache-t ./build/default/tests/ops/ops_tests --gtest_filter='*ConvTest.Direct*' \
  > "$OUT/ops.log" 2>&1; echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|max relative error direct" "$OUT/ops.log"
for r in 1 2; do
  ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn --shape 1,128,3,512,512,3,1 --algo direct \
    2>&1 | tail -4 | tee -a "$OUT/conv-out-bench.txt"
done
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 > "$OUT/profile.txt" 2>&1
grep -A7 "totals of vae" "$OUT/profile.txt" | grep -E "conv|total"; grep "decoder conv_out" -A3 "$OUT/profile.txt" | cut -c1-150
