#!/usr/bin/env bash
# Session 48, call C (issue 17; the build of call B: carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/ops/ops_tests build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh
# on`): the ring of halo windows (SDGEN_HALO_WINDOWS=2, 4) on the rows GEMM with the shared-memory epilogue
# (SDGEN_GEMM_DIRECT_STORE=0: call B's direct store lost), alternating with the ring of one, forced
# coop-winograd-rows, per-launch GPU times and registers. A warm-up process first (call B's first ran at idle clocks).
# Needs `git apply scripts/device/sessions/s48-bc-direct-store-and-window-ring-rejected.patch` (both ideas rejected
# and removed; docs/perf.md session 48).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
run() {  # name shape env...
  local name=$1 s=$2; shift 2
  env "$@" SDGEN_GEMM_DIRECT_STORE=0 SDGEN_PIPELINE_STATS=1 SDGEN_BENCH_KERNEL_TIMES=1 timeout 60 ./build/default/app/sdgen \
    --bench-conv2d --precision fp16 --algo coop-winograd-rows --shape $s > /tmp/row.txt 2>&1
  { echo "== $name"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  awk -v n="$name" '$1 == "shape" && $4 == "coop-winograd-rows" {t=$5} $1 == "kernel" {k=$0; sub(/.*coop-winograd-rows /, "", k);
    sub(/ 128x128.*/, "", k); s[k] += $2; c[k]++} /pipeline stats .*rows gemm/ {r=$0; sub(/.*Register Count=/, "", r); sub(/,.*/, "", r)}
    END {printf "%-34s total %s regs %s |", n, t, r; for (k in s) printf " %s %.4f (%d)", k, s[k], c[k]; print ""}' /tmp/row.txt
}
run warmup 1,256,256,512,512,3,1 X=1
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
  for w in 1 2 4 1 2 4; do run "${s//,/-}-ring$w" $s SDGEN_HALO_WINDOWS=$w; done
done
