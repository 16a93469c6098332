#!/usr/bin/env bash
# Session 19, call A (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check build/default/app/sdgen-base build/default/app/sdgen-copyfix
# build/default/bench/postprocess_bench` and `slim-tree.sh on`: bench/e2e.py on the new code (the decode written
# to device memory and copied to the host-visible image in the same submission; the post-process reading that
# image in place), then the decode A/B in one call: the session's starting binary (sdgen-base), the copy alone
# (sdgen-copyfix) and both changes (sdgen), 12 images each, twice, alternating; the images must be equal.
set -uo pipefail
bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json"; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -8 "$OUT/e2e.log"
source scripts/device/vulkan-env.sh >/dev/null 2>&1
m=/tmp/e2e/sd15-random
for round in 1 2; do
  for b in sdgen-base sdgen-copyfix sdgen; do
    mkdir -p /tmp/ab/$b
    ./build/default/app/$b -m $m -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 \
      --sampler euler --cfg-scale 7 -W 512 -H 512 --precision fp16 --batch-count 12 -o /tmp/ab/$b/img.png -v \
      > /dev/null 2> "$OUT/ab-$b-$round.txt"
    echo "$b round $round rc=$?: $(grep -E '^\s*decode ' "$OUT/ab-$b-$round.txt")"
  done
done
for b in sdgen-base sdgen-copyfix sdgen; do echo "$b: $(cat /tmp/ab/$b/*.png | md5sum) $(ls /tmp/ab/$b | wc -l) files"; done
./build/default/bench/postprocess_bench 10 | tail -4
# The coop tile of the large-problem bucket (SDGEN_COOP_BIG_TILE, the rule's tile: --no-autotune for all runs)
# through the SD 1.5 step and decode convolutions, and the same tiles on 4096^3.
for v in "" 128,128,32,4,2,d 256,128,32,4,4 128,256,32,4,4 128,128,64,4,2 256,128,32,4,4,d ""; do
  SDGEN_COOP_BIG_TILE=$v ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 --no-autotune \
    > "$OUT/tile-${v:-default}.txt" 2>&1
  echo "tile '${v:-default}' rc=$?: unet $(grep -A1 'totals of unet' "$OUT/tile-${v:-default}.txt" | grep -o 'conv .*ms' ) |" \
    "vae $(grep -A1 'totals of vae' "$OUT/tile-${v:-default}.txt" | grep -o 'conv .*ms')"
done
./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --only "square 4096" --rounds 20 --reps 5 \
  coop:128,128,32,4,2 coop:128,128,32,4,2,d coop:256,128,32,4,4 coop:128,256,32,4,4 coop:128,128,64,4,2 \
  coop:256,128,32,4,4,d 2>&1 | tail -12
