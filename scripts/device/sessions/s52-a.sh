#!/usr/bin/env bash
# Session 52, call A (session 51's prepared call C, with this session's fix beside it; carry .gl .carry .whl after
# `scripts/device/pack.sh build/default/app/sdgen-head` and `scripts/device/slim-tree.sh on`): where SD 1.5's peak
# device memory goes (3626 MiB in session 51's residency bench against the 3 GB bar; 2609 in session 15) and what
# the cold start compiles. The random SD 1.5 folder (make_sd15_random.py), then 20-step 512^2 fp16 images with -v
# and SDGEN_MEMORY_PEAK_LOG=1 (what was live at the device pool's peak, by kind and name), each binary with a
# fresh cache (cold: tuning at load) and then the same cache again (warm). sdgen-head: d392481; sdgen: the
# working tree (conv scratch recording passes, the decode sizing it first; SDGEN_COMPILE_LOG, which d392481
# ignores; the autotune's untimed run one launch per candidate).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh >/dev/null 2>&1
mkdir -p /tmp/s52a
python3 -c "
import sys, pathlib; sys.path.insert(0, 'tests/reference')
import make_sd15_random as m; m.save(m.build(m.SD15), pathlib.Path('/tmp/s52a'), ldm=False)" > /tmp/s52a/make.log 2>&1 || { tail -5 /tmp/s52a/make.log; exit 1; }
run() {  # name, binary, cache dir
  local name=$1 bin=$2 cache=$3
  mkdir -p $cache-nv  # the driver's shader cache, fresh with sdgen's (it keys on the SPIR-V)
  env __GL_SHADER_DISK_CACHE_PATH=$cache-nv SDGEN_CACHE_DIR=$cache SDGEN_MEMORY_PEAK_LOG=1 SDGEN_COMPILE_LOG=1 $bin -m /tmp/s52a/sd15-random \
    -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 -W 512 -H 512 --precision fp16 \
    -o /tmp/s52a/$name.png -v > "$OUT/$name.txt" 2>&1
  echo "== $name (rc $?)"
  grep -A8 "^memory (MiB)" "$OUT/$name.txt"; grep -i "compile\|autotune\|tuning" "$OUT/$name.txt" | head -8
  grep -A12 "memory peak log, device" "$OUT/$name.txt"
  grep -A14 "compile log:" "$OUT/$name.txt"
}
run head-cold ./build/default/app/sdgen-head /tmp/c52-head
# run head-warm ./build/default/app/sdgen-head /tmp/c52-head
run new-cold ./build/default/app/sdgen /tmp/c52-new
run new-warm ./build/default/app/sdgen /tmp/c52-new
for v in head new; do for f in /tmp/c52-$v/conv-tune-v*.json; do cp "$f" "$OUT/$v-$(basename "$f")"; done; done
ls -la /tmp/c52-new > "$OUT/cache-dir.txt"
