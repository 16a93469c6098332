#!/usr/bin/env bash
# Session 46, call B (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): the halo tile with Winograd
# F(2,3) along y ("halo-f23", gemm_coop.slang A_MODE 7; SDGEN_CONV_HALO_F23=1 adds it to the candidates). The halo
# tests against float64 with validation first, then the VAE's large rows, one process each, fresh cache, every
# candidate's time, register statistics, cuDNN beside.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalo*/f16:ConvHaloCompile.*' > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID|FAILED  \]|max relative" "$OUT/tests.log" | head -10 | cut -c1-200
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
for s in 1,256,256,512,512,3,1 1,256,128,512,512,3,1 1,128,128,512,512,3,1 1,512,256,256,256,3,1 1,512,512,256,256,3,1 \
         1,512,512,128,128,3,1; do
  rm -rf /tmp/c46b
  SDGEN_CONV_HALO_F23=1 SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c46b timeout 90 ./build/default/app/sdgen --bench-conv2d \
    --precision fp16 --algo tuned --reference cudnn --shape $s > "$OUT/row-${s//,/_}.txt" 2>&1
  row < "$OUT/row-${s//,/_}.txt"
  grep "pipeline stats" "$OUT/row-${s//,/_}.txt" | grep halo | sed -E 's/.*autotune (.*) \[CS\]: Register Count=([0-9]+).*Local Memory Size=([0-9]+).*/\1 regs \2 local \3/' | sort -u | tr '\n' ';'; echo
  python3 - /tmp/c46b/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print(e["problem"][:36], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:8]))
PY
done
