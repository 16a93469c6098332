#!/usr/bin/env bash
# Session 51, call C (issue 18's bars since issue 17's algorithms; carry .gl .carry .whl after
# `scripts/device/pack.sh` of sdgen and `scripts/device/slim-tree.sh on`): where SD 1.5's peak device memory goes
# (3626 MiB in call A/B's residency bench against the 3 GB bar; 2609 in session 15). The random SD 1.5 folder
# (make_sd15_random.py), then 20-step 512^2 fp16 images with -v and SDGEN_MEMORY_PEAK_LOG=1 (what was live at the
# device pool's peak, by kind and name): a fresh cache (cold: tuning at load), then the same cache again (warm).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
mkdir -p /tmp/s51c
python3 -c "
import sys, pathlib; sys.path.insert(0, 'tests/reference')
import make_sd15_random as m; m.save(m.build(m.SD15), pathlib.Path('/tmp/s51c'), ldm=False)" > /tmp/s51c/make.log 2>&1 || { tail -5 /tmp/s51c/make.log; exit 1; }
run() {  # name, cache dir, env...
  local name=$1 cache=$2; shift 2
  env "$@" SDGEN_CACHE_DIR=$cache SDGEN_MEMORY_PEAK_LOG=1 ./build/default/app/sdgen -m /tmp/s51c/sd15-random \
    -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 -W 512 -H 512 --precision fp16 \
    -o /tmp/s51c/$name.png -v > "$OUT/$name.txt" 2>&1
  echo "== $name (rc $?)"
  grep -A8 "^memory (MiB)" "$OUT/$name.txt"; grep -i "kernel compile\|autotune\|tuning" "$OUT/$name.txt" | head -4
  grep -A45 "memory peak log, device" "$OUT/$name.txt"
}
rm -rf /tmp/c51c /tmp/c51c-norows
run cold /tmp/c51c
run warm /tmp/c51c
