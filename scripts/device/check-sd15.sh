#!/usr/bin/env bash
# Runs on the GPU machine from the repository root (carry .gl, .carry from scripts/device/pack.sh, and .whl):
# builds the full-size SD 1.5 architecture with random weights through diffusers (a diffusers folder and a
# single-file LDM checkpoint) and its torch references (tests/reference/make_sd15_random.py), then checks every
# component of both layouts in fp32 and fp16 with sdgen_model_check and times the UNet step. With `tiny` it also
# writes the tiny configuration's model and references as $OUT/sd15-tiny.tar.gz (tests/data/sd15-tiny).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/check-out}
mkdir -p "$OUT"
source scripts/device/python-env.sh
python3 -c "import torch, diffusers, transformers; print('torch', torch.__version__, 'diffusers', diffusers.__version__, 'transformers', transformers.__version__)"
source scripts/device/vulkan-env.sh
check=build/default/tests/model_check/sdgen_model_check
status=0
if [ "${1:-}" = tiny ]; then
  python3 tests/reference/make_sd15_random.py /tmp/sd15-tiny /tmp/sd15-tiny/refs --config tiny --device cpu --fp64 \
    2>&1 | tee "$OUT/make-sd15-tiny.log"
  SDGEN_VALIDATION=1 "$check" --refs /tmp/sd15-tiny/refs/sd15_random --model /tmp/sd15-tiny/sd15-random \
    --model /tmp/sd15-tiny/sd15-random-ldm.safetensors --config /tmp/sd15-tiny/sd15-random --repetitions 2 \
    2>&1 | tee "$OUT/check-sd15-tiny.log" || status=1
  tar -czf "$OUT/sd15-tiny.tar.gz" -C /tmp sd15-tiny
  shift
fi
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader || true
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs 2>&1 | tee "$OUT/make-sd15.log"
cp /tmp/sd15/refs/sd15_random.json "$OUT/"
"$check" --refs /tmp/sd15/refs/sd15_random --model /tmp/sd15/sd15-random --model /tmp/sd15/sd15-random-ldm.safetensors \
  --json "$OUT/sd15-check.json" "$@" 2>&1 | tee "$OUT/check-sd15.log" || status=1
# Where the SD 1.5 step's time goes: every conv layer and the totals by op type (docs/perf.md).
for p in ${PROFILE_PRECISIONS:-fp32 fp16}; do
  ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision "$p" \
    --json "$OUT/profile_conv_sd15_$p.json" > "$OUT/profile_conv_sd15_$p.txt" 2>&1 || status=1
  tail -25 "$OUT/profile_conv_sd15_$p.txt"
done
# The built-in model at its defaults (issue 8: at most 0.2 s an image): five images, the CLI's timing summary.
for s in 1 2 3 4 5; do
  ./build/default/app/sdgen -p "a small red circle at the top left on a blue background" -s "$s" -o "$OUT/builtin_$s.png" \
    -v 2>&1 | grep -A8 "^timings" || status=1
done
exit $status
