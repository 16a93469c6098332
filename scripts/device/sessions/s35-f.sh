#!/usr/bin/env bash
# Session 35, call F (issue 22; carry .gl .carry after `scripts/device/pack.sh build/default/bench/linear_bench` and
# `scripts/device/slim-tree.sh on`): linear_bench --cold (every layer copy reads its own weights, >= 160 MB of
# copies: cold in L2 as in a step) on SDXL's shapes, the short-K fp16-accumulator tile off / on alternating. Does it
# predict the step's gain (call C: 1.0 ms) rather than the hot-L2 bench's 3.0 ms?
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
L=./build/default/bench/linear_bench
for r in off-1 on-1 off-2 on-2; do
  h=1; [ "${r%-*}" = off ] && h=0
  SDGEN_HALF_TILE=$h timeout 60 $L bench/data/sdxl_linear_shapes.json --cold --rounds 5 --json "$OUT/cold-$r.json" auto \
    > "$OUT/cold-$r.txt" 2>&1; echo "$r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
rs = [r for r in ("off-1", "on-1", "off-2", "on-2") if os.path.exists(f"{out}/cold-{r}.json")]
runs = {r: json.load(open(f"{out}/cold-{r}.json"))["rows"] for r in rs}
sums = {r: 0.0 for r in runs}
for i, row in enumerate(runs[rs[0]]):
    for r in runs: sums[r] += runs[r][i]["ms"] * runs[r][i]["per_step"]
    print(f"{row['name']:20s} x{row['per_step']:3d} " + " ".join(f"{runs[r][i]['ms']:8.4f}" for r in runs)
          + f"  {runs[rs[-1]][i]['kernel']}")
print("per step (cold weights): " + " ".join(f"{r} {sums[r]:.3f}" for r in runs))
PY
