#!/usr/bin/env bash
# Session 43, call A (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`). Session 42 measured the unsplit 256x256 conv candidate with 2048-deep fp16
# chunks (vae.512@256 1.028 ms, vae.256@512 1.058; errors 5.5e-3 / 7.8e-3 of the general kernel's output, SD 1.5's
# fp16 VAE decoder 5.58e-3 of torch fp32) and then made the chunks even (2304 -> 2 x 1152, 4608 -> 3 x 1536): the
# same planes, shorter fp16 sums, not yet re-timed; and gave the opt-in coop-winograd fp16 tiles an explicit V (an
# input-transform launch, then a plain batched GEMM), not yet timed. Here: the tests with validation, the four VAE
# rows still near 2x (three processes each, fresh caches, cuDNN in the same process; the first two with
# SDGEN_CONV_HALF_WINOGRAD=1), every candidate's tuning time, and SD 1.5's model check (its decoder's parity).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalfTileSplit*/f16:Conv/ConvTest.CoopWinograd*/f16:WinogradInputTest.*' \
  > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID" "$OUT/tests.log" | head -8 | cut -c1-200
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
# Round 1 and 2 with SDGEN_CONV_HALF_WINOGRAD=1 (the coop-winograd fp16 tiles, now on an explicit V, timed beside
# the implicit GEMM's candidates), round 3 without: the tuner's choice and each candidate's time (cache of round 1).
rm -rf /tmp/c43a-1 /tmp/c43a-2 /tmp/c43a-3
for s in 1,512,512,256,256,3,1 1,256,256,512,512,3,1 1,512,256,256,256,3,1 1,256,128,512,512,3,1; do
  for r in 1 2 3; do
    knob=1; [ $r = 3 ] && knob=0
    SDGEN_CONV_HALF_WINOGRAD=$knob SDGEN_CACHE_DIR=/tmp/c43a-$r timeout 100 ./build/default/app/sdgen --bench-conv2d \
      --precision fp16 --algo tuned --reference cudnn --shape $s 2>&1 | row
  done
done
cp /tmp/c43a-1/conv-tune-v1.json "$OUT/" 2>/dev/null
python3 - /tmp/c43a-1/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])[:5]
    print(e["problem"][:44], "|", ", ".join(f"{k} {v:.4f}" for k, v in best))
PY
timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > "$OUT/make15.log" 2>&1 || { tail -5 "$OUT/make15.log"; exit 1; }
rm -rf /tmp/c43a-m; SDGEN_CACHE_DIR=/tmp/c43a-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
