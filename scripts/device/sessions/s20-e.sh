#!/usr/bin/env bash
# Session 20, call E (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`: the
# session's final code (layer norms in one launch on tensor-core devices) through bench/e2e.py beside diffusers.
set -uo pipefail
bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json"; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -12 "$OUT/e2e.log"
