#!/usr/bin/env bash
# Session 22, call G (issue 22), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`: where
# SDXL's 1024^2 step goes on the session's final code, for the next session's plan: the full-size random SDXL
# (tests/reference/make_sdxl_random.py), then `sdgen --profile-conv` of it in fp16 at 1024^2 (the JSON report).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
timeout 200 python3 tests/reference/make_sdxl_random.py /tmp/sdxl/models /tmp/sdxl/refs > "$OUT/make.log" 2>&1; echo "make rc=$?"
timeout 150 ./build/default/app/sdgen --profile-conv -m /tmp/sdxl/models/sdxl-random -W 1024 -H 1024 --precision fp16 \
  --json "$OUT/profile-sdxl.json" > "$OUT/profile-sdxl.txt" 2>&1; echo "profile rc=$?"
rm -f "$OUT/make.log"
python3 -c "
import json; d=json.load(open('$OUT/profile-sdxl.json'))
for g in d['graphs']: print(g['name'], round(g['total_ms'], 3), g['launches'], {k: round(v['ms'], 3) for k, v in g['by_type'].items()})"
