#!/usr/bin/env bash
# Session 38 (no device: prepared for the next session), call A (issues 17 and 22; carry .gl .carry after
# `scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/app/sdgen build/default/app/libsdgen_cudnn_reference.so`
# and `scripts/device/slim-tree.sh on`). Winograd F(2,3) fused on tensor cores (coop-winograd's fused form,
# shaders/conv/conv_winograd_coop.slang, SDGEN_COOP_WINOGRAD_FUSED=1), built without a device: its float64 tests with
# validation first (a failure ends the call), its registers and shared memory, then the VAE's and SDXL's 3x3 rows
# with the implicit GEMM (coop, the rule's tile), the fused form and the unfused form, cuDNN in each run.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopWinograd*:ConvWinogradFused.*' > "$OUT/tests.log" 2>&1
rc=$?
echo "ops tests rc=$rc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|got|VUID|max relative" "$OUT/tests.log" | head -16 | cut -c1-220
[ $rc -eq 0 ] || exit 1
S=./build/default/app/sdgen
SDGEN_PIPELINE_STATS=1 SDGEN_COOP_WINOGRAD_FUSED=1 timeout 60 $S --bench-conv2d --precision fp16 --shape 1,512,512,128,128,3,1 \
  --algo coop-winograd --quick > "$OUT/stats.txt" 2>&1
grep -iE "winograd.*(register|shared)|fused" "$OUT/stats.txt" | head -6 | cut -c1-220
# VAE (SD 1.5 decode at 512^2: 512 ch at 64^2 and 128^2, 256 at 256^2, 128 at 512^2; the table's 2x rows 512 at
# 256^2 and 256 at 512^2) and SDXL's UNet (320 at 128^2, 640 at 64^2, 1280 at 32^2, batch 2).
for sh in 1,512,512,64,64,3,1 1,512,512,128,128,3,1 1,256,256,256,256,3,1 1,128,128,512,512,3,1 \
  1,512,512,256,256,3,1 1,256,256,512,512,3,1 2,320,320,128,128,3,1 2,640,640,64,64,3,1 2,1280,1280,32,32,3,1; do
  for r in coop fused unfused; do
    a=coop-winograd f=1; [ $r = coop ] && a=coop; [ $r = unfused ] && f=0
    SDGEN_COOP_WINOGRAD_FUSED=$f timeout 60 $S --bench-conv2d --precision fp16 --reference cudnn --shape $sh --algo $a \
      > "$OUT/bench-${sh//,/_}-$r.txt" 2>&1
    echo "$sh $r rc=$?: $(grep -E "fp16" "$OUT/bench-${sh//,/_}-$r.txt" | grep -vE "^#" | tail -1 | tr -s ' ' | cut -c1-200)"
  done
done
