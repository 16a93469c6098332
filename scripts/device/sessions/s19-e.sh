#!/usr/bin/env bash
# Session 19, call E (issue 22), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `slim-tree.sh on`: the full-size SDXL check on this
# session's code (the decode through device memory, group-norm statistics by whole rows — the fp32 VAE at 1024²
# runs them in 256 parts): every component against torch, the 1024² step beside diffusers', one timed image.
set -uo pipefail
bash scripts/device/check-sdxl.sh 1 > "$OUT/check-sdxl.txt" 2>&1; echo "check-sdxl rc=$?"
grep -E "rel err|unet step|ok$|FAIL" "$OUT/check.log" 2>/dev/null | head -24
grep -E "decode|denoise|peak" "$OUT"/sdgen-1.log 2>/dev/null | head -6
tail -12 "$OUT/check-sdxl.txt"
