#!/usr/bin/env bash
# Issue 16 on the GPU machine: the tensor-core GEMM's correctness tests (validation on), then the linear
# shapes of an SD 1.5 step timed by sdgen (bench/linear_bench) and by cuBLAS through PyTorch in the same call.
#   scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/bench/linear_bench
#   run: bash scripts/device/bench-tensor-core.sh [VARIANT...]      (carry .gl .carry)
# Full outputs under $OUT: ops_tests.log, torch_linear.json, linear.json, bench.log.
set -uo pipefail
source scripts/device/vulkan-env.sh
out=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader || true
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter="${SDGEN_TEST_FILTER:-*Coop*:*Linear*}" \
  > "$out/ops_tests.log" 2>&1
grep -E "^\[  (PASSED|FAILED) |FAILED|relative error|\[vulkan validation\]" "$out/ops_tests.log" | head -60
python3 bench/reference/torch_linear.py bench/data/sd15_linear_shapes.json "$out/torch_linear.json" \
  > "$out/torch_linear.log" 2>&1 || tail -5 "$out/torch_linear.log"
variants=("$@")
[ ${#variants[@]} -eq 0 ] && variants=(auto tiled)
./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds "${ROUNDS:-30}" \
  --json "$out/linear.json" "${variants[@]}" 2>&1 | tee "$out/bench.log"
cat "$out/torch_linear.log"
