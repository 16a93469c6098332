#!/usr/bin/env bash
# Session 22, call D (issue 22), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`: the
# full-size SDXL check on the session's final code (the upsamplers by output phase change the UNet and the VAE):
# every component against torch, the replayed 1024^2 step, one 1024^2 image.
set -uo pipefail
timeout 420 bash scripts/device/check-sdxl.sh 1 > "$OUT/sdxl.txt" 2>&1; echo "rc=$?"
grep -iE "fp16|fp32|step|peak|unet|vae|text|error|fail" "$OUT/sdxl.txt" | tail -40
