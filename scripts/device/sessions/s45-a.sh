#!/usr/bin/env bash
# Session 45, call A (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): the halo window loaded and
# stored at a slice's first tap (session 44's call D measured it as a patch: fp32 128x128 halo 156 -> 127
# registers), its offsets computed per slice; and a sweep of halo tiles (SDGEN_CONV_HALO=all): 128x256 fp32,
# fp16 256x256 in 8 subgroups of 128x64 (w8x4) or 16 of 64x64 (w4x4), 128x256 w4x4, 128x128 w4x4 / w8x2;
# and the 128x128 halo tiles split over input channels below 16384 rows (the UNet's 32^2 and 16^2, the VAE's 64^2).
# The halo tests against float64 with validation first (every swept tile), then the VAE's large rows, one process
# each, fresh cache, every candidate's time, register statistics, cuDNN beside.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalo*/f16:ConvHaloCompile.*' > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID|FAILED  \]|max relative" "$OUT/tests.log" | head -10 | cut -c1-200
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
for s in 1,256,256,512,512,3,1 1,256,128,512,512,3,1 1,128,128,512,512,3,1 1,512,256,256,256,3,1 2,320,640,32,32,3,1 \
         2,640,640,32,32,3,1 2,1920,640,32,32,3,1 2,640,1280,16,16,3,1 1,512,512,64,64,3,1; do
  rm -rf /tmp/c45a
  SDGEN_CONV_HALO=all SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c45a timeout 90 ./build/default/app/sdgen --bench-conv2d \
    --precision fp16 --algo tuned --reference cudnn --shape $s > "$OUT/row-${s//,/_}.txt" 2>&1
  row < "$OUT/row-${s//,/_}.txt"
  grep "pipeline stats" "$OUT/row-${s//,/_}.txt" | grep halo | sed -E 's/.*autotune (.*) \[CS\]: Register Count=([0-9]+).*Local Memory Size=([0-9]+).*/\1 regs \2 local \3/' | sort -u | tr '\n' ';'; echo
  python3 - /tmp/c45a/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print(e["problem"][:36], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:10]))
PY
done
