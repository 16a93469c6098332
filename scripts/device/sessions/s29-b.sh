#!/usr/bin/env bash
# Ran with scripts/device/sessions/s29-b-split-sum-rejected.patch applied (git apply; rejected, not in the tree).
# Session 29, call B (carry .gl .carry .whl; binaries as call A). Call A: split-K summed in the GEMM's launch
# made every split GEMM ~20-30 us slower (UNet GPU sum 12.51 -> 13.42 ms with 91 launches fewer). Where does it
# go? `sdgen --profile-conv` with SDGEN_SPLIT_SUM = launch (the sum launch), unset (SPLIT 2: AllMemoryBarrier),
# light (SPLIT 3: barriers with uniform-memory semantics only), and two diagnostics that give wrong results
# (measurement builds only, never committed): noreduce (SPLIT 4: counters and barriers, the last part does not
# sum) and layout (SPLIT 5: tile-major partial stores only).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in launch-r1 fused-r1 light-r1 noreduce-r1 layout-r1 launch-r2 fused-r2 light-r2; do
  case ${v%-r*} in
    fused) e="SDGEN_CACHE_DIR=/tmp/cache-fused";;
    *) e="SDGEN_SPLIT_SUM=${v%-r*} SDGEN_CACHE_DIR=/tmp/cache-${v%-r*}";; esac
  env $e timeout 100 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "$v rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'conv|linear|total' | tr -s ' ' | tr '\n' ' ')"
done
python3 bench/profile_compare.py --graph unet --top 24 launch=$OUT/prof-launch-r1.json,$OUT/prof-launch-r2.json \
  fused=$OUT/prof-fused-r1.json,$OUT/prof-fused-r2.json light=$OUT/prof-light-r1.json,$OUT/prof-light-r2.json \
  noreduce=$OUT/prof-noreduce-r1.json layout=$OUT/prof-layout-r1.json > "$OUT/compare.txt" 2>&1
head -3 "$OUT/compare.txt"; grep -E "^  (launch|fused|light|noreduce|layout) " "$OUT/compare.txt" | head -5
rm -f "$OUT"/prof-*.json
