#!/usr/bin/env bash
# Session 53, call A (was s52-c.sh, plus the compile log on the cold run) (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# issue 18's residency bench on this session's code (coop-winograd-rows bands of 96 MiB; the autotune's clock ramp)
# for the results file, then one more cold SD 1.5 run on its folder whose tuning cache is kept (the first problem
# tuned measured 4-5x slow in call A before the ramp).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SECONDS=0
bash scripts/device/residency.sh --runs 2 --cold-runs 2 > /dev/null 2>&1
echo "== residency rc $? at $SECONDS s"; tail -12 "$OUT/residency.log"; cat "$OUT/h100-residency.json"
mkdir -p /tmp/c52c-nv
env SDGEN_COMPILE_LOG=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/c52c-nv SDGEN_CACHE_DIR=/tmp/c52c ./build/default/app/sdgen \
  -m /tmp/residency/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 -W 512 -H 512 \
  --precision fp16 -o /tmp/c52c.png -v > "$OUT/cold.txt" 2>&1
echo "== cold rc $? at $SECONDS s"; grep -i "kernel compile\|conv autotune\|peak  \|conv scratch" "$OUT/cold.txt"
cp /tmp/c52c/conv-tune-v1.json "$OUT/c-conv-tune-v1.json"
# the warm run's memory at its peak, by kind (rows U now made per layer on first use)
env SDGEN_MEMORY_PEAK_LOG=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/c52c-nv SDGEN_CACHE_DIR=/tmp/c52c ./build/default/app/sdgen \
  -m /tmp/residency/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 -W 512 -H 512 \
  --precision fp16 -o /tmp/c52d.png -v > "$OUT/warm-peak.txt" 2>&1
echo "== warm rc $? at $SECONDS s"; grep -i "peak  \|weights " "$OUT/warm-peak.txt"
# A/B of the precompiled Slang modules on the cold compile: the same cold run with SDGEN_SLANG_MODULES=0
for mode in 0 1; do
  rm -rf /tmp/c53-$mode /tmp/c53-$mode-nv; mkdir -p /tmp/c53-$mode-nv
  env SDGEN_SLANG_MODULES=$mode SDGEN_COMPILE_LOG=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/c53-$mode-nv SDGEN_CACHE_DIR=/tmp/c53-$mode \
    ./build/default/app/sdgen -m /tmp/residency/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 1 \
    --steps 20 -W 512 -H 512 --precision fp16 -o /tmp/c53-$mode.png -v > "$OUT/cold-modules-$mode.txt" 2>&1
  echo "== cold modules=$mode rc $? at $SECONDS s"; grep -i "kernel compile\|conv autotune\|compile log" "$OUT/cold-modules-$mode.txt"
done
cmp /tmp/c53-0.png /tmp/c53-1.png && echo "images identical"
