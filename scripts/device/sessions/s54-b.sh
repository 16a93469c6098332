#!/usr/bin/env bash
# Session 54, call B (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# (1) issue 18's residency bench with three cold runs on the default of 2 Slang sessions made at once, and three
# cold 20-step 512^2 runs with 4 (call A: 6.47-6.71 s against 6.10 s of kernel compile, one run each);
# (2) issue 17's last row, 128 channels at 512^2, beside the same tile's other shapes, one process each, tuned, cuDNN
# beside, the tuner's fastest candidates: 256 -> 128 at 512^2 (twice the K per tile: is a tile's fixed cost what
# holds the 128-channel row back?), 128 at 1024^2 and 128 at 512^2 in a batch of 2 (4x / 2x the tiles: the last
# wave's idle SMs).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
SECONDS=0
bash scripts/device/residency.sh --runs 1 --cold-runs 3 > /dev/null 2>&1
echo "== residency rc $? at $SECONDS s"; grep "^cold run\|^folder run\|^single_file run" "$OUT/residency.log"; cat "$OUT/h100-residency.json"
mkdir -p /tmp/s54b
for i in 1 2 3; do
  name=creators4-$i
  rm -rf /tmp/s54b/$name /tmp/s54b/$name-nv; mkdir -p /tmp/s54b/$name-nv
  env SDGEN_SLANG_SESSION_CREATORS=4 SDGEN_COMPILE_LOG=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/s54b/$name-nv SDGEN_CACHE_DIR=/tmp/s54b/$name \
    ./build/default/app/sdgen -m /tmp/residency/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 1 \
    --steps 20 -W 512 -H 512 --precision fp16 -o /tmp/s54b/$name.png -v > "$OUT/$name.txt" 2>&1
  echo "== $name rc $? at $SECONDS s"; grep -i "model load  \|kernel compile\|conv autotune\|compile log" "$OUT/$name.txt"
done
for shape in 1,128,128,512,512,3,1 1,256,128,512,512,3,1 1,128,128,1024,1024,3,1 2,128,128,512,512,3,1; do
  rm -rf /tmp/c54b
  SDGEN_CACHE_DIR=/tmp/c54b timeout 120 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
    --reference cudnn --shape $shape > /tmp/row.txt 2>&1
  { echo "== $shape"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  echo "== $shape at $SECONDS s: $(awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c54b/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:5]]"
done
