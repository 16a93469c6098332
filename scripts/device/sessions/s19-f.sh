#!/usr/bin/env bash
# Session 19, call F (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/tests/ops/ops_tests`,
# `git show 1be24bf:shaders/conv/conv_direct.slang > scripts/device/sessions/s19-f-old-conv_direct.slang` (untracked:
# it travels with the tree) and `slim-tree.sh on`: the direct conv's halo in quad planes (conflict-free shared reads) against the previous
# shader (s19-f-old-conv_direct.slang, in a copy of the shader folder): the direct tests with validation, then
# --profile-conv (the decode's conv_out and GPU sum) and 12 images per shader folder (the decode per image),
# alternating. Call F ran it with one kernel cache for both folders and measured the same kernel twice (the cache
# key did not hold the shader folder: fixed in engine/slang_compiler.cpp); call G, each folder its own cache.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
rm -rf /tmp/sh-old && cp -r shaders /tmp/sh-old && cp scripts/device/sessions/s19-f-old-conv_direct.slang /tmp/sh-old/conv/conv_direct.slang
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter='*ConvTest.Direct*' > "$OUT/ops.log" 2>&1
  echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|max relative error direct" "$OUT/ops.log"
  grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
fi
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
m=/tmp/sd15/sd15-random
for round in 1 2; do
  for v in old new; do
    dir=$PWD/shaders; [ $v = old ] && dir=/tmp/sh-old
    SDGEN_CACHE_DIR=/tmp/cache-$v SDGEN_SHADER_DIR=$dir ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > "$OUT/profile-$v.txt" 2>&1
    echo "$v round $round: $(grep -A6 'totals of vae' "$OUT/profile-$v.txt" | grep -E 'total' | tr -s ' ') |" \
      "$(grep 'decoder conv_out' "$OUT/profile-$v.txt" | tr -s ' ' | cut -c1-120)"
  done
done
for round in 1 2; do
  for v in old new; do
    dir=$PWD/shaders; [ $v = old ] && dir=/tmp/sh-old
    mkdir -p /tmp/ab/$v
    SDGEN_CACHE_DIR=/tmp/cache-$v SDGEN_SHADER_DIR=$dir ./build/default/app/sdgen -m $m -p "a photo of an astronaut riding a horse on the moon" -s 1 \
      --steps 20 --sampler euler --cfg-scale 7 -W 512 -H 512 --precision fp16 --batch-count 12 -o /tmp/ab/$v/img.png -v \
      > /dev/null 2> "$OUT/ab-$v-$round.txt"
    echo "$v round $round rc=$?: $(grep -E '^\s*decode ' "$OUT/ab-$v-$round.txt")"
  done
done
python3 - <<'PY'
import glob, numpy as np
from PIL import Image
a = sorted(glob.glob("/tmp/ab/old/*.png")); b = sorted(glob.glob("/tmp/ab/new/*.png"))
d = [np.abs(np.asarray(Image.open(x), np.int16) - np.asarray(Image.open(y), np.int16)) for x, y in zip(a, b)]
print("images %d vs %d: mean |diff| %.4f/255, max %d/255" % (len(a), len(b), np.mean([x.mean() for x in d]), max(x.max() for x in d)))
PY
