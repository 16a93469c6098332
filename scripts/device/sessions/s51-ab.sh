#!/usr/bin/env bash
# Session 51, one call (carry .gl .carry .whl after `scripts/device/pack.sh build/default/app/libsdgen_cudnn_reference.so`
# and `scripts/device/slim-tree.sh on`): s51-a.sh (the rows GEMM's fixed cost per tile), then issue 18's residency
# bench (peak device memory of an SD 1.5 image since the one-band rows conv took up to 264 MiB of VAE scratch).
set -uo pipefail
bash scripts/device/sessions/s51-a.sh 2>&1 | tee "$OUT/s51-a.txt"
bash scripts/device/sessions/s51-b.sh 2>&1 | tee "$OUT/s51-b.txt"
bash scripts/device/residency.sh --runs 2 --cold-runs 1 > /dev/null 2>&1
tail -25 "$OUT/residency.log"; cat "$OUT/h100-residency.json"
