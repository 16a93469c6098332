#!/usr/bin/env bash
# Session 19, call C (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check build/default/app/sdgen-base build/default/bench/postprocess_bench`
# and `slim-tree.sh on`: the frontends ask for the 8-bit image alone (GenerationRequest::floatPixels off) —
# bench/e2e.py on the new code, then the decode A/B against call B's code (sdgen-base), 12 images each, twice.
set -uo pipefail
bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json"; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -6 "$OUT/e2e.log"
source scripts/device/vulkan-env.sh >/dev/null 2>&1
m=/tmp/e2e/sd15-random
for round in 1 2; do
  for b in sdgen-base sdgen; do
    mkdir -p /tmp/ab/$b
    ./build/default/app/$b -m $m -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 \
      --sampler euler --cfg-scale 7 -W 512 -H 512 --precision fp16 --batch-count 12 -o /tmp/ab/$b/img.png -v \
      > /dev/null 2> "$OUT/ab-$b-$round.txt"
    echo "$b round $round rc=$?: $(grep -E '^\s*decode ' "$OUT/ab-$b-$round.txt")"
  done
done
for b in sdgen-base sdgen; do echo "$b: $(cat /tmp/ab/$b/*.png | md5sum) $(ls /tmp/ab/$b | wc -l) files"; done
./build/default/bench/postprocess_bench 10 | tail -4
