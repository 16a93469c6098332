#!/usr/bin/env bash
# Session 19, call B (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check build/default/app/sdgen-base build/default/tests/graph_tests`
# and `slim-tree.sh on`: group-norm statistics read by whole rows (shaders/reduce.slang reduceRowsMain) —
# the reduce tests with validation, bench/e2e.py on the new code, sdgen_model_check's VAE parity, the decode's
# norm launches in --profile-conv (sdgen-base = call A's code, then the new one), and the decode A/B of images.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 ./build/default/tests/graph_tests --gtest_filter='*Reduce*' > "$OUT/graph.log" 2>&1
echo "graph_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/graph.log" | head -5
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/graph.log"
bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json"; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -6 "$OUT/e2e.log"
source scripts/device/python-env.sh >/dev/null 2>&1
m=/tmp/e2e/sd15-random
./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random --model $m --precision fp16 \
  > "$OUT/model-check.txt" 2>&1; echo "model_check rc=$?"; grep -i -E "vae|decoder" "$OUT/model-check.txt" | head -6
for b in sdgen-base sdgen sdgen-base sdgen; do
  ./build/default/app/$b --profile-conv -m $m -W 512 -H 512 --precision fp16 --json /tmp/p-$b.json > "$OUT/profile-$b.txt" 2>&1
  python3 - /tmp/p-$b.json $b <<'PY'
import json, sys
g = next(g for g in json.load(open(sys.argv[1]))["graphs"] if g["name"] == "vae decode")
norms = [o for o in g["others"] if o["type"] == "norm"]
print(sys.argv[2], "decode total %.4f ms, norm %.4f ms in %d launches" % (g["total_ms"], sum(o["ms"] for o in norms), len(norms)))
for o in norms:
    if "up 3 resnet 0 norm1" in o["label"] or "up 2 resnet 1 norm1" in o["label"] or "mid resnet 0 norm1" in o["label"]:
        print("   %.4f %s" % (o["ms"], o["label"]))
PY
done
for round in 1 2; do
  for b in sdgen-base sdgen; do
    mkdir -p /tmp/ab/$b
    ./build/default/app/$b -m $m -p "a photo of an astronaut riding a horse on the moon" -s 1 --steps 20 \
      --sampler euler --cfg-scale 7 -W 512 -H 512 --precision fp16 --batch-count 12 -o /tmp/ab/$b/img.png -v \
      > /dev/null 2> "$OUT/ab-$b-$round.txt"
    echo "$b round $round rc=$?: $(grep -E '^\s*decode ' "$OUT/ab-$b-$round.txt")"
  done
done
python3 - <<'PY'
import glob, numpy as np
from PIL import Image
a = sorted(glob.glob("/tmp/ab/sdgen-base/*.png")); b = sorted(glob.glob("/tmp/ab/sdgen/*.png"))
d = [np.abs(np.asarray(Image.open(x), np.int16) - np.asarray(Image.open(y), np.int16)) for x, y in zip(a, b)]
print("images %d vs %d: mean |diff| %.4f/255, max %d/255" % (len(a), len(b), np.mean([x.mean() for x in d]), max(x.max() for x in d)))
PY
