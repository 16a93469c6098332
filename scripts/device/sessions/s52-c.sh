#!/usr/bin/env bash
# Session 52, call C (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# the autotune's clock ramp (after the GPU idled, candidates run untimed until 100 ms have passed and two runs
# agree): a cold SD 1.5 run whose tuning cache is kept (the first problem tuned measured 4-5x slow in call A),
# then issue 18's residency bench on the same binary for the results file; coop-winograd-rows bands of 96 MiB.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SECONDS=0
mkdir -p /tmp/s52c /tmp/c52c-nv
python3 -c "
import sys, pathlib; sys.path.insert(0, 'tests/reference')
import make_sd15_random as m; m.save(m.build(m.SD15), pathlib.Path('/tmp/s52c'), ldm=False)" > /tmp/s52c/make.log 2>&1 || { tail -5 /tmp/s52c/make.log; exit 1; }
env __GL_SHADER_DISK_CACHE_PATH=/tmp/c52c-nv SDGEN_CACHE_DIR=/tmp/c52c ./build/default/app/sdgen -m /tmp/s52c/sd15-random \
  -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 -W 512 -H 512 --precision fp16 \
  -o /tmp/s52c/cold.png -v > "$OUT/cold.txt" 2>&1
echo "== cold rc $? at $SECONDS s"; grep -i "kernel compile\|conv autotune\|peak  \|conv scratch" "$OUT/cold.txt"
cp /tmp/c52c/conv-tune-v1.json "$OUT/c-conv-tune-v1.json"
bash scripts/device/residency.sh --runs 2 --cold-runs 2 > /dev/null 2>&1
echo "== residency rc $? at $SECONDS s"; tail -12 "$OUT/residency.log"; cat "$OUT/h100-residency.json"
