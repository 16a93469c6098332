#!/usr/bin/env bash
# Session 42, call D (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`). Call C found the 256x256 fp16-accumulator tile in K parts fastest on the VAE's
# 256^2 and 512^2 convs once candidates from 8 waves were allowed (2.03x and 2.17x of cuDNN left). Here the same
# tile unsplit past 2048 of K, each 2048 flushed to an fp16 plane (ACC 3, the linear layers' large tile): the
# split's partials and second launch traded for planes added in its own epilogue. Tests with validation, the
# rows over 2x with a fresh cache and every candidate's tuning time; then s42-b.sh (SD 1.5's split-sum norm A/B)
# in the time left.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 100 ./build/default/tests/ops/ops_tests --gtest_filter='Conv/ConvTest.CoopHalfTileSplit*/f16' \
  > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID" "$OUT/tests.log" | head -8 | cut -c1-200
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
rm -rf /tmp/c42d
for s in 1,512,512,256,256,3,1 1,256,256,512,512,3,1 1,512,256,256,256,3,1; do
  for r in 1 2; do
    SDGEN_CACHE_DIR=/tmp/c42d-$r timeout 100 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
      --reference cudnn --shape $s 2>&1 | row
  done
done
cp /tmp/c42d-1/conv-tune-v1.json "$OUT/" 2>/dev/null
python3 - /tmp/c42d-1/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])[:5]
    print(e["problem"][:44], "|", ", ".join(f"{k} {v:.4f}" for k, v in best))
PY
echo "== s42-b (${SECONDS} s)"
SECONDS=$((SECONDS + 60)) bash scripts/device/sessions/s42-b.sh
