#!/usr/bin/env bash
# Session 48, call A (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests`
# and `scripts/device/slim-tree.sh on`): coop-winograd-rows' transforms with 16-byte words (8 channels per
# invocation) against session 47's 8-byte ones (SDGEN_CONV_WINOGRAD_ROWS_VEC4, temporary), and the band height
# (SDGEN_CONV_WINOGRAD_ROWS_BAND tile rows, temporary): smaller bands keep V and M in the 50 MB L2 between launches.
# Forced algorithm, per-launch GPU times (SDGEN_BENCH_KERNEL_TIMES=1). Both knobs and the 16-byte transforms were
# temporary (rejected, removed; docs/perf.md session 48): rerunning needs that build.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests --gtest_filter='*WinogradRows*' > "$OUT/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "FAILED|PASSED|Validation|VUID" "$OUT/tests.txt" | sort | uniq -c | head -8
grep -E "max \|gpu-ref\|" "$OUT/tests.txt" | sort | uniq -c | head -6
run() {  # name shape env...
  local name=$1 s=$2; shift 2
  env "$@" SDGEN_BENCH_KERNEL_TIMES=1 timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo coop-winograd-rows --shape $s > "$OUT/$name.txt" 2>&1
  awk -v n="$name" '$1 == "shape" && $4 == "coop-winograd-rows" {t=$5} $1 == "kernel" {k=$0; sub(/.*coop-winograd-rows /, "", k);
    sub(/ 128x128.*/, "", k); s[k] += $2; c[k]++} END {printf "%-28s total %s |", n, t;
    for (k in s) printf " %s %.4f (%d)", k, s[k], c[k]; print ""}' "$OUT/$name.txt"
}
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1 1,512,512,256,256,3,1; do
  tag=${s//,/-}
  run "$tag-vec4" $s SDGEN_CONV_WINOGRAD_ROWS_VEC4=1
  run "$tag-vec8" $s X=1
  for b in 8 16 24; do run "$tag-vec8-band$b" $s SDGEN_CONV_WINOGRAD_ROWS_BAND=$b; done
  run "$tag-vec4-again" $s SDGEN_CONV_WINOGRAD_ROWS_VEC4=1
done
