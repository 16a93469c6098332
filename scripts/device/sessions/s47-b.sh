#!/usr/bin/env bash
# Session 47, call B (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): coop-winograd-rows (Winograd
# F(6,3) along the rows, new) — its tests with validation, then the VAE's large rows tuned with it among the
# candidates (one process and fresh cache per row, cuDNN beside), every candidate's time from the cache.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests --gtest_filter='*WinogradRows*:*CoopHaloWhereSupported*' \
  > "$OUT/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "FAILED|PASSED|relative error|rows.*error|Validation|VUID" "$OUT/tests.txt" | sort | uniq -c | head -20
grep -E "max relative error" "$OUT/tests.txt" | head
for s in 1,256,256,512,512,3,1 1,256,128,512,512,3,1 1,128,128,512,512,3,1 1,512,512,256,256,3,1; do
  rm -rf /tmp/c47b
  SDGEN_CACHE_DIR=/tmp/c47b timeout 120 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
    --reference cudnn --shape $s > "$OUT/row-${s//,/-}.txt" 2>&1
  echo "== $s rc=$?"; awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, "err", $12}' "$OUT/row-${s//,/-}.txt"
  python3 - /tmp/c47b/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print("  ", ", ".join(f"{k} {v:.4f}" for k, v in best[:7]))
PY
done
timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo coop-winograd-rows --shape 1,256,256,512,512,3,1 \
  > "$OUT/forced.txt" 2>&1; echo "forced rc=$?"; grep -E "shape" "$OUT/forced.txt" | tail -2 | cut -c1-220
