#!/usr/bin/env bash
# Session 24, call D (carry .gl .carry .whl; `scripts/device/slim-tree.sh on` for the call), after
# `scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/tests/model_check/sdgen_model_check`:
# the one-launch group norm holding each invocation's pixels in registers (SDGEN_GROUP_NORM_HELD 1 / 0 alternating,
# twice, `sdgen --profile-conv` of SD 1.5 fp16; bench/profile_compare.py), its float64 test with validation, the
# driver's registers for the norm kernels, and sdgen_model_check fp16.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests --gtest_filter='*GroupNormRows*:*LayerNormRows*' > "$OUT/norm-tests.log" 2>&1
echo "norm tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/norm-tests.log" | tr '\n' ' ')"; grep -E "max \|gpu" "$OUT/norm-tests.log"
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
prof() {  # variant round
  SDGEN_GROUP_NORM_HELD=$1 SDGEN_PIPELINE_STATS=$([ "$2" = 1 ] && echo 1 || echo 0) ./build/default/app/sdgen --profile-conv \
    -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 --json "$OUT/prof-held$1-r$2.json" > /tmp/prof.txt 2> "/tmp/stats-$1.txt"
  echo "held=$1 round $2 rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'norm|total' | tr -s ' ' | tr '\n' ' ')"
}
prof 0 1; prof 1 1; prof 0 2; prof 1 2
grep -E "norm" /tmp/stats-1.txt | sed -E 's/.*stats (.*) \[CS\]: Register Count=([0-9]+).*Shared Memory Size=([0-9]+).*/\2 regs \3 B  \1/' | sort -u | head -12
python3 bench/profile_compare.py --graph unet --top 16 loop="$OUT/prof-held0-r1.json,$OUT/prof-held0-r2.json" \
  held="$OUT/prof-held1-r1.json,$OUT/prof-held1-r2.json" 2>&1 | tee "$OUT/compare.txt" | head -40
timeout 300 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/sd15/refs/sd15_random --model /tmp/sd15/sd15-random --precision fp16 2>&1 | grep -E "rel err|unet step" | cut -c1-160 | head -8
