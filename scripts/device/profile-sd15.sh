#!/usr/bin/env bash
# On the GPU machine (carry .gl .carry .whl): SD 1.5 with random weights (tests/reference/make_sd15_random.py),
# `sdgen --profile-conv` of its fp16 UNet step and VAE decode (JSON under $OUT), and one 20-step 512x512
# Euler images at CFG 7 with -v timings. Pack first: scripts/device/pack.sh.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > $OUT/make.log 2>&1 || tail -5 $OUT/make.log
./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 --json $OUT/profile_conv_sd15_fp16.json > $OUT/profile_conv_sd15_fp16.txt 2>&1; echo profile rc=$?
grep -A8 "totals of unet" $OUT/profile_conv_sd15_fp16.txt; grep -A8 "totals of vae" $OUT/profile_conv_sd15_fp16.txt
for i in 1; do ./build/default/app/sdgen -m /tmp/sd15/sd15-random -p "a lighthouse at dusk" -s 42 -W 512 -H 512 --steps 20 --cfg-scale 7 --sampler euler --precision fp16 -o $OUT/img.png -v 2>&1 | grep -A7 "^timings"; done
rm -f $OUT/make.log
