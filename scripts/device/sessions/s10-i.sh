#!/usr/bin/env bash
# Session 10, call I: issue 19's end-to-end bench (scripts/device/e2e.sh) on the tree with EDGE 0.
set -uo pipefail
bash scripts/device/e2e.sh > /tmp/e2e.txt 2>&1; echo "e2e rc=$?"
tail -25 /tmp/e2e.txt
