#!/usr/bin/env bash
# Session 10, call A: does spirv-opt (-O2) change the GEMM core on 4096^3, and what the driver says of each
# tile (registers, spills) through VK_KHR_pipeline_executable_properties.
set -uo pipefail
out=$OUT
source scripts/device/vulkan-env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader || true
V="coop:128,128,32,4,2 coop:128,128,32,4,2,h coop:128,128,32,4,2,H coop:128,256,32,4,4,H coop:256,128,32,4,4,H coop:256,256,32,8,4,H coop:128,256,32,4,8,H"
for O in 0 2; do
  echo "== SDGEN_SLANG_OPT=$O"
  SDGEN_CACHE_DIR=/tmp/cache$O SDGEN_SLANG_OPT=$O SDGEN_PIPELINE_STATS=1 timeout 200 ./build/default/bench/linear_bench \
    bench/data/sd15_linear_shapes.json --only "square 4096" --rounds 20 --reps 5 --json $out/lin$O.json $V > $out/lin$O.log 2>&1
  echo "rc=$?"; grep -vE "^ " $out/lin$O.log | grep -v "pipeline stats" | cut -c1-200
  grep "pipeline stats" $out/lin$O.log | grep -i coop | sed -E 's/sdgen: pipeline stats //' | cut -c1-400
done
