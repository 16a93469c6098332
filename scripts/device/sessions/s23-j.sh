#!/usr/bin/env bash
# Session 23, call J, carry .gl .carry, after `scripts/device/pack.sh build/default/bench/linear_bench`: calls G-I
# found the words each invocation stages per MMA to be the GEMM core's bound. Tiles that stage fewer words per
# invocation with more subgroups, no code change (linear_bench variants): 128x128 of 16 subgroups of 32x32 (2 words
# per 32-deep slice; 4 per 64-deep), beside the default (8 of 64x32: 4 words), on 4096^3 and SD 1.5's shapes.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 120 ./build/default/bench/linear_bench scripts/device/sessions/s23-f-shapes.json --rounds 10 --only "square 4096" \
  coop:128,128,32,4,2 coop:128,128,32,2,2 coop:128,128,64,2,2 coop:128,128,64,4,2 coop:256,128,64,4,2 2>&1 | cut -c1-140
timeout 200 ./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds 10 --json "$OUT/sd15.json" \
  auto coop:128,128,32,2,2 coop:128,128,64,2,2 coop:64,64,64,1,1 > "$OUT/sd15.txt" 2>&1; echo "sd15 rc=$?"
python3 - "$OUT/sd15.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))['rows']
tot = {}
for r in rows: tot[r['variant']] = tot.get(r['variant'], 0) + r['ms'] * r['per_step']
for v, t in sorted(tot.items(), key=lambda x: x[1]): print('  %-28s %.3f ms per step' % (v, t))
PY
