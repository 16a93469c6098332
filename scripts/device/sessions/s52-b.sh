#!/usr/bin/env bash
# Session 52, call B (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# issue 18's residency bench on the working tree's sdgen (conv scratch held at its largest need) for the results
# file: `--runs 2 --cold-runs 3` as session 15's (every cold run with every cache empty, the driver's included).
set -uo pipefail
bash scripts/device/residency.sh --runs 2 --cold-runs 3 > /dev/null 2>&1
echo "rc $?"; tail -25 "$OUT/residency.log"; cat "$OUT/h100-residency.json"
