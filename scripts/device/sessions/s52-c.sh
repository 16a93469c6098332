#!/usr/bin/env bash
# Session 52, call C (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# issue 18's residency bench on this session's code (coop-winograd-rows bands of 96 MiB; the autotune's clock ramp)
# for the results file, then one more cold SD 1.5 run on its folder whose tuning cache is kept (the first problem
# tuned measured 4-5x slow in call A before the ramp).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SECONDS=0
bash scripts/device/residency.sh --runs 2 --cold-runs 2 > /dev/null 2>&1
echo "== residency rc $? at $SECONDS s"; tail -12 "$OUT/residency.log"; cat "$OUT/h100-residency.json"
mkdir -p /tmp/c52c-nv
env __GL_SHADER_DISK_CACHE_PATH=/tmp/c52c-nv SDGEN_CACHE_DIR=/tmp/c52c ./build/default/app/sdgen \
  -m /tmp/residency/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 -W 512 -H 512 \
  --precision fp16 -o /tmp/c52c.png -v > "$OUT/cold.txt" 2>&1
echo "== cold rc $? at $SECONDS s"; grep -i "kernel compile\|conv autotune\|peak  \|conv scratch" "$OUT/cold.txt"
cp /tmp/c52c/conv-tune-v1.json "$OUT/c-conv-tune-v1.json"
