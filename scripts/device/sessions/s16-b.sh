#!/usr/bin/env bash
# Session 16, call B (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `slim-tree.sh on`: the end-to-end table (bench/e2e.py:
# diffusers eager and CUDA graph in the same call) with the VAE attention on tensor cores and the 128x128
# split-K conv candidates, then SD 1.5's --profile-conv (now each launch's median of 5 timed runs).
set -uo pipefail
bash scripts/device/e2e.sh > "$OUT/e2e-run.txt" 2>&1; echo "e2e rc=$?"
tail -25 "$OUT/e2e-run.txt"
bash scripts/device/profile-sd15.sh 2>&1 | tail -30
