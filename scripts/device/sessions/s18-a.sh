#!/usr/bin/env bash
# Session 18, calls A and B (B: with tensor addressing) (issues 19/22/17: the GEMM core), carry .gl .carry, after `scripts/device/pack.sh
# build/default/bench/wg_gemm_bench` and `slim-tree.sh on`: the device's VK_NV_cooperative_matrix2 flexible
# (workgroup-scope) shapes, then the workgroup-scope GEMM (shaders/linear/gemm_wg.slang) against the engine's linear
# kernel on 4096^3 and the SD 1.5 / SDXL linear shapes.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
./build/default/app/sdgen --list-devices 2>&1 | tee "$OUT/list-devices.txt" | sed -n '1,200p' | grep -iE "flexible|workgroup|x.*f16" | head -40
V="128,128,32,256,4 128,128,64,256,2 128,256,32,256,4 256,128,32,256,4 128,256,64,256,2 256,128,64,256,2 256,256,32,256,4 256,256,64,256,2 128,128,32,128,4 64,128,32,128,4 128,64,32,128,4 64,64,32,128,4 64,64,64,128,2 128,128,32,256,4,f32"
# shellcheck disable=SC2086
timeout 400 ./build/default/bench/wg_gemm_bench --rounds 20 --reps 5 4096,4096,4096 8192,320,2560 8192,1280,320 2048,640,5120 2048,2560,640 512,1280,10240 8192,640,5120 2048,1280,10240 2048,5120,1280 -- $V 2>&1 | grep -v "^  \|^device" | tee "$OUT/wg-gemm.txt"
