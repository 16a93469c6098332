#!/usr/bin/env bash
# Session 15, call D (issues 17, 19; the candidate it measured was rejected and removed: docs/perf.md), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/ops/ops_tests build/default/app/libsdgen_cudnn_reference.so` and `slim-tree.sh on`: the
# 256x256 coop conv tile (fp16 accumulators in 2048-deep chunks, spirv-opt) — its tests against float64 on the
# H100, the fp16 conv table beside cuDNN (autotune choosing among the candidates), and SD 1.5's --profile-conv.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
export SDGEN_VALIDATION=1
./build/default/tests/ops/ops_tests --gtest_filter='*CoopLargeTile*:*CoopWhereSupported*:ConvTuneTest.*:ConvCandidates.*' \
  > "$OUT/ops_tests.log" 2>&1; echo "ops_tests rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|max \|" "$OUT/ops_tests.log" | head -20
unset SDGEN_VALIDATION
source scripts/device/cuda-env.sh >/dev/null 2>&1
./build/default/app/sdgen --bench-conv2d --precision fp16 --algo auto --reference cudnn --json "$OUT/bench_conv2d_fp16_auto.json" \
  > "$OUT/bench_conv2d_fp16_auto.txt" 2>&1; echo "bench rc=$?"
grep -E "vae|geomean|geometric" "$OUT/bench_conv2d_fp16_auto.txt" | head -20
bash scripts/device/profile-sd15.sh
