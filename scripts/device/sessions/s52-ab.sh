#!/usr/bin/env bash
# Session 52, one call (carry .gl .carry .whl after `scripts/device/pack.sh build/default/app/sdgen-head` and
# `scripts/device/slim-tree.sh on`): s52-a.sh (where the peak memory and the cold compile go, d392481 against
# the working tree), then issue 18's residency bench on the working tree's sdgen.
set -uo pipefail
SECONDS=0
bash scripts/device/sessions/s52-a.sh 2>&1 | tee "$OUT/s52-a.txt" | grep -v "^  kernel  "
echo "== s52-a took $SECONDS s"
bash scripts/device/residency.sh --runs 2 --cold-runs 2 > /dev/null 2>&1
echo "== residency rc $? at $SECONDS s"; tail -12 "$OUT/residency.log"; cat "$OUT/h100-residency.json"
