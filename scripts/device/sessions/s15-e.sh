#!/usr/bin/env bash
# Session 15, call E (issue 19): call D's --profile-conv showed the VAE decode 2.1x slower than the committed
# profile in every op type (UNet step unchanged). Same SD 1.5 profile three ways in one call: as is, with
# SDGEN_HOST_PACKING=0 (no host-visible weight packing), with SDGEN_SLANG_IN_PROCESS=0; GPU clocks beside.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active --format=csv
for v in "" SDGEN_HOST_PACKING=0 SDGEN_SLANG_IN_PROCESS=0 ""; do
  env $v ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
    --json "$OUT/profile${v:+-$v}.json" > "$OUT/profile${v:+-$v}.txt" 2>&1
  echo "== ${v:-default}: $(grep -A6 'totals of vae' "$OUT/profile${v:+-$v}.txt" | grep -E 'conv|total' | tr -s ' ' | tr '\n' ' ')"
done
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv
./build/default/app/sdgen -m /tmp/sd15/sd15-random -p "a lighthouse at dusk" -s 42 --steps 20 --precision fp16 -o "$OUT/img.png" -v 2>&1 | grep -E "decode|denoise|peak|arena|VAE"
