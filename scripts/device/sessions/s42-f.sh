#!/usr/bin/env bash
# Session 42, call F (issue 17; the budget's last minutes): the even-chunk flush and the explicit-V coop-winograd
# (SDGEN_CONV_HALF_WINOGRAD=1) on the two Cin-512 VAE rows and 256 channels at 512^2, one process each, cuDNN
# beside; every candidate's tuning time from the cache.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms rel %s cuDNN %s ratio %s |%s\n", $1, $5, $13, $15, $16, t}'; }
rm -rf /tmp/c42f
for s in 1,512,512,256,256,3,1 1,512,256,256,256,3,1 1,256,256,512,512,3,1; do
  SDGEN_CONV_HALF_WINOGRAD=1 SDGEN_CACHE_DIR=/tmp/c42f timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo tuned --reference cudnn --shape $s 2>&1 | row
done
cp /tmp/c42f/conv-tune-v1.json "$OUT/" 2>/dev/null
python3 - /tmp/c42f/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])[:4]
    w = {k: round(v, 4) for k, v in e["ms"].items() if "winograd" in k}
    print(e["problem"][:40], "|", ", ".join(f"{k} {v:.4f}" for k, v in best), "| wino", w)
PY
