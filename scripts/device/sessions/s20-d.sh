#!/usr/bin/env bash
# Session 20, call D (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh` of sdgen and `slim-tree.sh
# on`: the one-launch layer norm also where the GEMM reads the norm itself today (rows <= 256: the text encoder's
# 154 rows, the UNet's 8^2 level), SDGEN_LAYER_NORM=rows, against the rule (unset), `sdgen --profile-conv` of
# SD 1.5 fp16 twice, alternating. Kept: every row count is the rule now, and SDGEN_LAYER_NORM=rows is gone (this
# script needs the tree of that call; docs/perf.md, session 20).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > /dev/null 2>&1; echo "tune rc=$?"
for round in 1 2; do
  for v in rule rows; do
    SDGEN_LAYER_NORM=$([ $v = rows ] && echo rows) ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 \
      --precision fp16 > "$OUT/profile-$v-$round.txt" 2>&1
    echo "layer norm $v, round $round rc=$?:" \
      "unet $(grep -A6 'totals of unet' "$OUT/profile-$v-$round.txt" | grep -E 'linear|norm|total' | tr -s ' ' | tr '\n' '|')" \
      "text $(grep -A6 'totals of text' "$OUT/profile-$v-$round.txt" | grep -E 'linear|norm|total' | tr -s ' ' | tr '\n' '|')"
  done
done
