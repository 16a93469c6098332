#!/usr/bin/env bash
# Session 18, calls E and F (issues 17/19), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`:
# the group norm + SiLU of a coop conv input (E: read by the GEMM, A_MODE 5/6, since removed; F: staged from a per-channel table, every size) -- its tests with validation, then
# `--profile-conv` of SD 1.5 fp16 and one image's -v timings with it (default) and without
# (SDGEN_CONV_FUSE_NORM=0), twice each, alternating, same process order.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 SDGEN_CACHE_DIR=/tmp/cache-t ./build/default/tests/ops/ops_tests \
  --gtest_filter='*Coop*Where*:*ConvInputAffine*:GemmCoopRule.*:*ConvTune*' > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|max relative error coop" "$OUT/ops.log" | head -12
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
M=/tmp/sd15/sd15-random
for round in 1 2; do
  for fuse in 1 0; do
    SDGEN_CONV_FUSE_NORM=$fuse ./build/default/app/sdgen --profile-conv -m $M -W 512 -H 512 --precision fp16 \
      --json "$OUT/profile-fuse$fuse-r$round.json" > "/tmp/profile-fuse$fuse-r$round.txt" 2>&1
    echo "== fuse $fuse round $round"; grep -A7 "totals of unet" "/tmp/profile-fuse$fuse-r$round.txt" | grep -E "conv|norm|total"
    grep -A7 "totals of vae" "/tmp/profile-fuse$fuse-r$round.txt" | grep -E "conv|norm|total"
    SDGEN_CONV_FUSE_NORM=$fuse ./build/default/app/sdgen -m $M -p "a lighthouse at dusk" -s 42 -W 512 -H 512 --steps 20 \
      --cfg-scale 7 --sampler euler --precision fp16 --batch-count 5 -o /tmp/img-$fuse.png -v 2>&1 | grep -E "decode|denoise"
  done
done
cp /tmp/profile-fuse1-r2.txt "$OUT/"; cp /tmp/profile-fuse0-r2.txt "$OUT/"
python3 - <<'P'
from PIL import Image; import numpy as np, glob
fa, fb = sorted(glob.glob('/tmp/img-1*.png'))[0], sorted(glob.glob('/tmp/img-0*.png'))[0]
a=np.asarray(Image.open(fa)).astype(float); b=np.asarray(Image.open(fb)).astype(float)
print('image fused vs staged: mean abs %.4f /255, max %d' % (abs(a-b).mean(), abs(a-b).max()))
P
