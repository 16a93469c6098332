#!/usr/bin/env bash
# Session 45, call D (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): what the device budget left
# room for after call C could not start — the 256-channel 512^2 row tuned with the ties going to fp32 accumulation
# (call B's tuner took the fp16 halo tile by name), cuDNN beside, every candidate's time.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/c45d
SDGEN_CACHE_DIR=/tmp/c45d timeout 90 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
  --reference cudnn --shape 1,256,256,512,512,3,1 > "$OUT/row.txt" 2>&1
awk '$4 == "tuned" {print $1, $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21}' "$OUT/row.txt"
python3 - /tmp/c45d/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print(e["problem"][:36], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:6]))
PY
