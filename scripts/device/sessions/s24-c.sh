#!/usr/bin/env bash
# Session 24, call C (carry .gl .carry .whl; `scripts/device/slim-tree.sh on` for the call), after
# `scripts/device/pack.sh`: every pipeline that SD 1.5's fp16 UNet step, VAE decode and text encoder build, with the
# driver's registers and shared memory (SDGEN_PIPELINE_STATS=1), beside the per-launch profile: which kernels call
# A's ~48 KB of shared memory per SM holds to fewer workgroups than their registers would.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
SDGEN_PIPELINE_STATS=1 ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
  --json "$OUT/profile.json" > "$OUT/profile.txt" 2> "$OUT/stats.txt"; echo "profile rc=$?"
grep -c "pipeline stats" "$OUT/stats.txt"
grep -A6 "totals of unet" "$OUT/profile.txt"
