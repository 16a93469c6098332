#!/usr/bin/env bash
# Session 21, call D (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`: the
# session's code (group norms of up to 20480 elements per (image, group) in one launch; the direct split timed in
# call A) through bench/e2e.py beside diffusers, and the per-layer profile of the same call. (The bound became
# 65536 with 1024 invocations after call F: this script now measures the final rule.)
set -uo pipefail
bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json"; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -14 "$OUT/e2e.log"
cp /tmp/e2e/profile.json "$OUT/profile.json" 2>/dev/null
