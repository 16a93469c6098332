#!/usr/bin/env bash
# Session 30, call A (carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). (1) Every
# cross-attention K/V projection of the text context as one GEMM (UNet::buildContextProjections): issue 19's
# end-to-end bench, diffusers in this call (text encoder + K/V per image, step, image). (2) Few-row linear tiles
# (SDGEN_FEW_ROW_TILE, layers of <= 256 rows: the text encoder's 154, the UNet's 8^2 level) without split-K:
# `sdgen --profile-conv` of the default and four variants (~6 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/e2e
timeout 300 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
tail -14 "$OUT/e2e.log"
cp /tmp/e2e/sdgen-images.stderr "$OUT/" 2>/dev/null; grep -E "text encode|tokenize" /tmp/e2e/sdgen-images.stderr | head -3
for v in base t3264s1 t3232s1 t6464s1 t3264auto base2; do
  case $v in
    base|base2) e="SDGEN_FEW_ROW_TILE=";;
    t3264s1) e="SDGEN_FEW_ROW_TILE=32,64,32,2,2,s1";;
    t3232s1) e="SDGEN_FEW_ROW_TILE=32,32,32,2,2,s1";;
    t6464s1) e="SDGEN_FEW_ROW_TILE=64,64,32,2,2,s1";;
    t3264auto) e="SDGEN_FEW_ROW_TILE=32,64,32,2,2";; esac
  env $e SDGEN_CACHE_DIR=/tmp/cache timeout 100 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "$v rc=$?: $(python3 -c "import json; d=json.load(open('$OUT/prof-$v.json')); print([(g['name'], g['launches'], round(g['total_ms'],3)) for g in d['graphs']])" 2>&1)"
done
python3 bench/profile_compare.py --graph text --top 16 base=$OUT/prof-base.json,$OUT/prof-base2.json \
  t3264s1=$OUT/prof-t3264s1.json t3232s1=$OUT/prof-t3232s1.json t6464s1=$OUT/prof-t6464s1.json \
  t3264auto=$OUT/prof-t3264auto.json > "$OUT/compare-text.txt" 2>&1
python3 bench/profile_compare.py --graph unet --top 24 base=$OUT/prof-base.json,$OUT/prof-base2.json \
  t3264s1=$OUT/prof-t3264s1.json t3232s1=$OUT/prof-t3232s1.json t6464s1=$OUT/prof-t6464s1.json \
  t3264auto=$OUT/prof-t3264auto.json > "$OUT/compare-unet.txt" 2>&1
head -40 "$OUT/compare-text.txt"
rm -f "$OUT"/prof-base2.json
