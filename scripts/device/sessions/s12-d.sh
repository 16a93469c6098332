#!/usr/bin/env bash
# Session 12, call D (issue 19): where the pipeline's text-encode time goes on the H100 (-v now splits it into
# tokenize, encoder, cross-attention K/V, start latents). Carry .gl .carry .whl.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
export SDGEN_CACHE_DIR=/tmp/sdcache
for prompt in "a photo of an astronaut riding a horse on the moon"; do
  ./build/default/app/sdgen -m /tmp/sd15/sd15-random -p "$prompt" -s 42 -W 512 -H 512 --steps 20 --cfg-scale 7 \
    --sampler euler --precision fp16 --batch-count 10 -o /tmp/img.png -v 2>&1 | grep -A9 "^timings"
done
