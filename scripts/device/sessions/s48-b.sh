#!/usr/bin/env bash
# Session 48, call B (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests`
# and `scripts/device/slim-tree.sh on`): the GEMM's direct store (accumulator fragments converted to fp16 and stored
# straight to coop-winograd-rows' products M, no shared-memory epilogue) against the epilogue
# (SDGEN_GEMM_DIRECT_STORE=0), forced coop-winograd-rows, per-launch GPU times; then the implicit GEMM's direct store
# with the bias (SDGEN_CONV_DIRECT_STORE=1, temporary) against its epilogue on three VAE rows tuned beside cuDNN (fresh
# cache per process; every candidate's time from the cache); and the rows GEMM's ring of halo windows
# (SDGEN_HALO_WINDOWS=2, 4, temporary: the windows of that many 16-channel slices loaded at once), registers.
# Needs `git apply scripts/device/sessions/s48-bc-direct-store-and-window-ring-rejected.patch` (both ideas rejected
# and removed; docs/perf.md session 48).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests --gtest_filter='*WinogradRows*:*CoopHaloWhereSupported*:*CoopDirectStore*:*CoopHaloEmulated*' \
  > "$OUT/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "FAILED|PASSED|Validation|VUID" "$OUT/tests.txt" | sort | uniq -c | head -8
grep -E "relative error" "$OUT/tests.txt" | sort | uniq -c | head -12
run() {  # name shape env...
  local name=$1 s=$2; shift 2
  env "$@" SDGEN_BENCH_KERNEL_TIMES=1 timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo coop-winograd-rows --shape $s > /tmp/row.txt 2>&1
  { echo "== $name"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  awk -v n="$name" '$1 == "shape" && $4 == "coop-winograd-rows" {t=$5} $1 == "kernel" {k=$0; sub(/.*coop-winograd-rows /, "", k);
    sub(/ 128x128.*/, "", k); s[k] += $2; c[k]++} END {printf "%-34s total %s |", n, t;
    for (k in s) printf " %s %.4f (%d)", k, s[k], c[k]; print ""}' /tmp/row.txt
}
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1 1,512,512,256,256,3,1; do
  tag=${s//,/-}
  for r in 1 2; do
    run "$tag-epilogue-$r" $s SDGEN_GEMM_DIRECT_STORE=0
    run "$tag-direct-$r" $s X=1
  done
done
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
  for w in 2 4; do run "${s//,/-}-direct-ring$w" $s SDGEN_HALO_WINDOWS=$w SDGEN_PIPELINE_STATS=1; done
  run "${s//,/-}-direct-3" $s SDGEN_PIPELINE_STATS=1
done
grep -E "pipeline stats .*rows gemm" "$OUT/rows.txt" | sort | uniq -c | cut -c1-220
for sd in 1,128,128,512,512,3,1:0 1,128,128,512,512,3,1:1 1,256,128,512,512,3,1:0 1,256,128,512,512,3,1:1 \
          1,128,128,512,512,3,1:0 1,128,128,512,512,3,1:1 1,256,256,512,512,3,1:1; do
  s=${sd%:*} d=${sd#*:}
    rm -rf /tmp/c48b
    SDGEN_CONV_DIRECT_STORE=$d SDGEN_CACHE_DIR=/tmp/c48b timeout 120 ./build/default/app/sdgen --bench-conv2d \
      --precision fp16 --algo tuned --reference cudnn --shape $s > /tmp/tuned.txt 2>&1
    { echo "== tuned $s direct-conv=$d"; cat /tmp/tuned.txt; } >> "$OUT/tuned.txt"
    awk -v s=$s -v d=$d '$4 == "tuned" {print "tuned", s, "conv-direct", d, "ours", $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21}' /tmp/tuned.txt
    python3 - /tmp/c48b/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print("  ", ", ".join(f"{k} {v:.4f}" for k, v in best[:5]))
PY
done
