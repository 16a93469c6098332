#!/usr/bin/env bash
# Session 46, call H (issue 17; carry as call B): halo-f23 with fp32 products (ACC 0) beside the fp16 ones, as
# 128x128 and 128x64 (fp32 products through -O0, fp16 ones through spirv-opt): registers and the VAE's
# 256-channel 512^2 rows and 128 at 512^2, one process each, every candidate's time; the halo tests with
# validation first.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHaloWhereSupported/f16:ConvHaloCompile.*' > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID|FAILED  \]|max relative" "$OUT/tests.log" | head -10 | cut -c1-200
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
for opt in 1; do
  for s in 1,256,256,512,512,3,1 1,256,128,512,512,3,1 1,128,128,512,512,3,1; do
    rm -rf /tmp/c46h
    SDGEN_CONV_HALO_F23=1 SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c46h timeout 90 \
      ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $s \
      > "$OUT/row-opt$opt-${s//,/_}.txt" 2>&1
    echo "opt $opt"; row < "$OUT/row-opt$opt-${s//,/_}.txt"
    grep "pipeline stats" "$OUT/row-opt$opt-${s//,/_}.txt" | grep f23 | sed -E 's/.*autotune (.*) \[CS\]: Register Count=([0-9]+).*/\1 regs \2/' | sort -u | tr '\n' ';'; echo
    python3 - /tmp/c46h/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print(e["problem"][:36], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:5]), "| f23", {k: round(v, 4) for k, v in e["ms"].items() if "f23" in k})
PY
  done
done
