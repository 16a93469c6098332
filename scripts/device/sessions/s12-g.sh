#!/usr/bin/env bash
# Session 12, call G (issue 19): the text encoder and its cross-attention K/V submitted without a host wait
# between them, the starting latents' upload waiting for both; e2e bench on that code. Carry .gl .carry .whl.
set -uo pipefail
r=/tmp/s12-g; mkdir -p $r
bash scripts/device/e2e.sh > $r/e2e.txt 2>&1; echo "e2e rc=$?"
tail -9 $r/e2e.txt; grep -A1 "text encode" /tmp/e2e/sdgen-images.stderr | head -2
cp $OUT/h100-e2e*.json $r/ 2>/dev/null; rm -f $OUT/*.json $OUT/e2e.log
tar -czf $OUT/s12-g.tar.gz -C $r .
