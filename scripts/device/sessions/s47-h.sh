#!/usr/bin/env bash
# Session 47, call H (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): coop-winograd-rows' halo GEMM
# (A_MODE 8) with the next slice's window fetched during the products, as the next B (it was loaded and stored at
# once at each slice's first step: every step of halo3) — tests with validation, the VAE's large rows tuned (two
# processes for 256 channels at 512^2), each launch's time, the kernel's registers.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests --gtest_filter='*WinogradRows*' > "$OUT/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "FAILED|PASSED|max relative error" "$OUT/tests.txt" | sort | uniq -c | head -20
SDGEN_PIPELINE_STATS=1 timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
  --shape 1,256,256,512,512,3,1 --reps 3 > "$OUT/stats.txt" 2>&1
grep -iE "pipeline stats|regist" "$OUT/stats.txt" | sort -u | head -12 | cut -c1-220
i=0
for s in 1,256,256,512,512,3,1 1,256,256,512,512,3,1 1,256,128,512,512,3,1 1,512,512,256,256,3,1 1,128,128,512,512,3,1; do
  i=$((i + 1)); rm -rf /tmp/c47h
  SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c47h timeout 120 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo tuned --reference cudnn --shape $s > "$OUT/row-$i.txt" 2>&1
  echo "== $s rc=$?"; awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, "err", $12}' "$OUT/row-$i.txt"
  grep "^kernel" "$OUT/row-$i.txt" | grep -v "general" | tail -6
  python3 - /tmp/c47h/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print("  ", ", ".join(f"{k} {v:.4f}" for k, v in best[:6]))
PY
done
