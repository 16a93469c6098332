#!/usr/bin/env bash
# Session 53, call B — prepared, not run (no machine could be started); the next session's first call (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# issue 18's residency bench on 64 MiB device blocks (call A: 12 blocks of 256 MiB = 3106 MiB nvidia-smi with
# 2716 MiB in use at a warm peak), then where a cold start's Slang time goes now that modules compile once (call A:
# a thread's first compile still took 2-4 s): cold 20-step 512^2 fp16 runs with SDGEN_COMPILE_LOG=1 (which now
# splits each kernel's Slang time into making a session and the precompiled modules): as committed, with at most
# 2 sessions made at once (SDGEN_SLANG_SESSION_CREATORS=2), and with 8 compile threads.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SECONDS=0
mkdir -p /tmp/s53b
bash scripts/device/residency.sh --runs 2 --cold-runs 2 > /dev/null 2>&1
echo "== residency rc $? at $SECONDS s"; tail -9 "$OUT/residency.log"; cat "$OUT/h100-residency.json"
nproc
run() {  # name, env...
  local name=$1; shift
  rm -rf /tmp/s53b/$name /tmp/s53b/$name-nv; mkdir -p /tmp/s53b/$name-nv
  env "$@" SDGEN_COMPILE_LOG=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/s53b/$name-nv SDGEN_CACHE_DIR=/tmp/s53b/$name \
    ./build/default/app/sdgen -m /tmp/residency/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 1 \
    --steps 20 -W 512 -H 512 --precision fp16 -o /tmp/s53b/$name.png -v > "$OUT/$name.txt" 2>&1
  echo "== $name rc $? at $SECONDS s"; grep -i "kernel compile\|conv autotune\|compile log" "$OUT/$name.txt"
  grep " first " "$OUT/$name.txt" | sort -t'#' -k2 -n | head -20 | cut -c1-150
}
run committed SDGEN_X=0
run creators2 SDGEN_SLANG_SESSION_CREATORS=2
# run threads8 SDGEN_COMPILE_THREADS=8  (left out: device time)
# The same image without precompiled modules on the committed run's tuning (copied into an otherwise empty cache):
# the same kernels' SPIR-V must give the same PNG, byte for byte.
rm -rf /tmp/s53b/m0 /tmp/s53b/m0-nv; mkdir -p /tmp/s53b/m0 /tmp/s53b/m0-nv
cp /tmp/s53b/committed/conv-tune-v1.json /tmp/s53b/m0/
env SDGEN_SLANG_MODULES=0 __GL_SHADER_DISK_CACHE_PATH=/tmp/s53b/m0-nv SDGEN_CACHE_DIR=/tmp/s53b/m0 \
  ./build/default/app/sdgen -m /tmp/residency/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 1 \
  --steps 20 -W 512 -H 512 --precision fp16 -o /tmp/s53b/m0.png -v > "$OUT/m0.txt" 2>&1
echo "== modules off on the same tuning rc $? at $SECONDS s"; grep -i "kernel compile\|conv autotune" "$OUT/m0.txt"
cmp /tmp/s53b/committed.png /tmp/s53b/m0.png && echo "images identical"
