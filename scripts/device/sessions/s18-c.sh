#!/usr/bin/env bash
# Session 18, call C (issue 19): the workgroup-scope GEMM through spirv-opt (-O2) against Slang's -O0 SPIR-V, 4096^3 and
# one SDXL shape (carry .gl .carry, after `scripts/device/pack.sh build/default/bench/wg_gemm_bench`).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
timeout 300 ./build/default/bench/wg_gemm_bench --rounds 20 --reps 5 4096,4096,4096 2048,1280,10240 -- \
  128,128,32,256,4 128,128,32,256,4,O 128,256,32,256,4,O 128,128,32,128,4,O 256,128,32,256,1,O 128,128,64,256,1,O \
  2>&1 | grep -v "^  \|^device" | tee "$OUT/wg-gemm-opt.txt"
