#!/usr/bin/env bash
# Session 24, call F (carry .gl .carry .whl; `scripts/device/slim-tree.sh on` for the call), after
# `scripts/device/pack.sh build/default/tests/model_check/sdgen_model_check`: the one-launch group norm for groups of up
# to 81920 elements (SDGEN_GROUP_NORM_MAX=81920: the 64^2 level's 640-channel norms, today statistics + staging)
# against the default 65536, three rounds alternating; then the session's final code end to end
# (`bash scripts/device/e2e.sh`: issue 19's table, diffusers in the same call).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for r in 1 2 3; do for v in 65536 81920; do
  SDGEN_GROUP_NORM_MAX=$v ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 \
    --precision fp16 --json "/tmp/prof-max$v-r$r.json" > /tmp/prof.txt 2>&1
  echo "max=$v round $r rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'norm|total' | tr -s ' ' | tr '\n' ' ')"
done; done
python3 bench/profile_compare.py --graph unet --top 12 \
  max65536="/tmp/prof-max65536-r1.json,/tmp/prof-max65536-r2.json,/tmp/prof-max65536-r3.json" \
  max81920="/tmp/prof-max81920-r1.json,/tmp/prof-max81920-r2.json,/tmp/prof-max81920-r3.json" 2>&1 | tee "$OUT/compare-max.txt" | head -24
bash scripts/device/e2e.sh > "$OUT/e2e-stdout.txt" 2>&1; echo "e2e rc=$?"; tail -22 "$OUT/e2e-stdout.txt"
