#!/usr/bin/env bash
# Session 17, call A (issue 17), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/ops/ops_tests build/default/app/libsdgen_cudnn_reference.so`, the previous shaders copied to
# .carry/shaders-base (`git archive HEAD shaders | tar -x -C .carry/shaders-base --strip-components=1`) and
# `slim-tree.sh on`: the im2col tap walk (A_MODE 2 without per-word divisions) against the previous kernel.
# 1. the coop conv and GEMM tests with validation (float64 references);
# 2. the fp16 conv table with cuDNN, previous shaders then new shaders then previous again (same process
#    order each time, so a drift of the GPU shows as base-vs-base);
# 3. SD 1.5 --profile-conv with the new shaders.
set -uo pipefail
source scripts/device/vulkan-env.sh
source scripts/device/cuda-env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*Coop*:ConvTest*:ConvTune*' > "$OUT/ops-coop.log" 2>&1
echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED  \]" "$OUT/ops-coop.log" | head -20
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops-coop.log"
bench() {  # $1 label, $2 shader dir
  SDGEN_SHADER_DIR="$2" SDGEN_CACHE_DIR="/tmp/cache-$1" ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --reference cudnn --json "$OUT/conv-fp16-$1.json" > "$OUT/conv-fp16-$1.txt" 2>&1
  echo "bench $1 rc=$?"; grep -i "geomean\|geometric" "$OUT/conv-fp16-$1.txt" | head -3
}
bench base "$PWD/.carry/shaders-base"
bench new "$PWD/shaders"
bench base2 "$PWD/.carry/shaders-base"
source scripts/device/python-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in new base; do
  d="$PWD/shaders"; [ $v = base ] && d="$PWD/.carry/shaders-base"
  SDGEN_SHADER_DIR="$d" SDGEN_CACHE_DIR="/tmp/cache-p-$v" ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/profile-$v.json" > "$OUT/profile-$v.txt" 2>&1
  echo "profile $v rc=$?"; grep -A8 "totals of unet" "$OUT/profile-$v.txt"; grep -A8 "totals of vae" "$OUT/profile-$v.txt"
done
