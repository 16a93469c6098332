#!/usr/bin/env bash
# Session 49, call C (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): coop-winograd-rows with the
# output transform in the products GEMM (A_MODE 9, gemm_coop_rows.slang) against its own output launch
# (SDGEN_WINOGRAD_ROWS_FUSED=0): tests with validation, then the VAE's 512^2 rows (256, 256 -> 128, 128 channels)
# and 512 at 256^2 tuned with cuDNN beside, fresh cache per process, each launch's time, the six fastest candidates.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 240 ./build/default/tests/ops/ops_tests --gtest_filter='*WinogradRows*' > "$OUT/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "FAILED|PASSED|max relative error|relative error" "$OUT/tests.txt" | sort | uniq -c | head -30
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1 1,256,128,512,512,3,1 1,512,512,256,256,3,1; do
  for fused in 0 1 0 1; do
    rm -rf /tmp/c49c
    SDGEN_WINOGRAD_ROWS_FUSED=$fused SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c49c timeout 120 \
      ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $s > /tmp/row.txt 2>&1
    { echo "== fused $fused $s"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
    echo "== fused $fused $s rc=$?"
    awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, "err", $12}' /tmp/row.txt
    grep "^kernel" /tmp/row.txt | grep -v "general" | tail -6
    python3 - /tmp/c49c/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print("  ", ", ".join(f"{k} {v:.4f}" for k, v in best[:6]))
PY
  done
done
