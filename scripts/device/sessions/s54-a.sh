#!/usr/bin/env bash
# Session 54, call A (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# issue 18's residency bench with at most 2 Slang sessions made at once by default (call s53-b on this H100:
# SDGEN_SLANG_SESSION_CREATORS=2 cut a cold run's kernel compile 11.4 -> 6.6 s), then cold 20-step 512^2 fp16 runs
# with the split compile log at 1, 2 (default), 4 and any number of creators, and 2 creators with 8 compile threads.
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SECONDS=0
mkdir -p /tmp/s54a
bash scripts/device/residency.sh --runs 2 --cold-runs 2 > /dev/null 2>&1
echo "== residency rc $? at $SECONDS s"; tail -9 "$OUT/residency.log"; cat "$OUT/h100-residency.json"
run() {  # name, env...
  local name=$1; shift
  rm -rf /tmp/s54a/$name /tmp/s54a/$name-nv; mkdir -p /tmp/s54a/$name-nv
  env "$@" SDGEN_COMPILE_LOG=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/s54a/$name-nv SDGEN_CACHE_DIR=/tmp/s54a/$name \
    ./build/default/app/sdgen -m /tmp/residency/sd15-random -p "a photo of an astronaut riding a horse on the moon" -s 1 \
    --steps 20 -W 512 -H 512 --precision fp16 -o /tmp/s54a/$name.png -v > "$OUT/$name.txt" 2>&1
  echo "== $name rc $? at $SECONDS s"; grep -i "kernel compile\|conv autotune\|compile log" "$OUT/$name.txt"
}
run default SDGEN_X=0
run creators1 SDGEN_SLANG_SESSION_CREATORS=1
run creators4 SDGEN_SLANG_SESSION_CREATORS=4
run creators-any SDGEN_SLANG_SESSION_CREATORS=0
run threads8 SDGEN_COMPILE_THREADS=8
run default-again SDGEN_X=0
for n in default creators1 creators4 creators-any threads8 default-again; do cmp /tmp/s54a/default.png /tmp/s54a/$n.png && echo "$n: same image"; done
