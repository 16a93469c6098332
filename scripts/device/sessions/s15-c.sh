#!/usr/bin/env bash
# Session 15, call C (issue 18): how in-process Slang compiles scale with threads on the GPU machine's 16 cores,
# against one slangc process per kernel (xargs -P). .carry/sp: a test driver (s15-c-conc.cpp, built by hand:
# the C API calls of engine/slang_library.cpp) and 234 generated kernels of a lavapipe run with slangc's SPIR-V.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
export SLANGLIB=$PWD/tools/slang/bin/libslang-compiler.so.0.2026.14.1 SHADERS=$PWD/shaders
cd .carry/sp
for t in ${THREADS:-16 8 4}; do ./conc $t $(ls *.slang) | tail -1; done
start=$(date +%s%N)
ls *.slang | xargs -P 16 -I{} sh -c "$OLDPWD/tools/slang/bin/slangc {} -entry main -I $SHADERS -o /tmp/{}.spv -target spirv -stage compute -fvk-use-scalar-layout -matrix-layout-row-major -O0 >/dev/null 2>&1"
echo "slangc processes -P 16: $(( ($(date +%s%N) - start) / 1000000 )) ms"
