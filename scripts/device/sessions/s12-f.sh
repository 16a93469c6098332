#!/usr/bin/env bash
# Session 12, call F (issue 19): the e2e bench after the threaded noise draw (the text-encode stage's start latents).
# Carry .gl .carry .whl.
set -uo pipefail
r=/tmp/s12-f; mkdir -p $r
bash scripts/device/e2e.sh > $r/e2e.txt 2>&1; echo "e2e rc=$?"
tail -9 $r/e2e.txt; grep -A3 "text encode" /tmp/e2e/sdgen-images.stderr | head -3
cp $OUT/h100-e2e*.json $r/ 2>/dev/null; rm -f $OUT/*.json $OUT/e2e.log
tar -czf $OUT/s12-f.tar.gz -C $r .
