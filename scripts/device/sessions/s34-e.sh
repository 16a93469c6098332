#!/usr/bin/env bash
# Session 34, call E (issue 19's bench on the session's final code; carry .gl .carry .whl, the bundle of call C:
# sdgen and sdgen_model_check): the SD 1.5 end-to-end bench with the one-wave 64x160 tile in.
set -uo pipefail
rm -rf /tmp/e2e; bash scripts/device/e2e.sh > "$OUT/e2e-run.txt" 2>&1
echo "e2e rc=$?"; tail -16 "$OUT/e2e-run.txt"
