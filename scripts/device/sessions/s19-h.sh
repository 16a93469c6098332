#!/usr/bin/env bash
# Session 19, call H (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `slim-tree.sh on`: bench/e2e.py on the session's final code.
set -uo pipefail
bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
mv "$OUT/h100-e2e.json" "$OUT/h200-e2e.json"; mv "$OUT/h100-e2e-details.json" "$OUT/h200-e2e-details.json" 2>/dev/null
tail -6 "$OUT/e2e.log"
