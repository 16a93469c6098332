#!/usr/bin/env bash
# Session 20, call B (issues 17/19), carry .gl .carry, after `scripts/device/pack.sh build/default/bench/linear_bench`
# and `slim-tree.sh on`: the small-problem coop tile (64x64, 4 subgroups of 32x32) with K slices of 32 (as is),
# 64 and 16, single and double-buffered, and the engine's own choice (auto): small-K GEMMs are a chain of
# K-slice round trips (global load, shared store, barrier, multiply), so fewer, deeper slices might shorten
# them. linear_bench over the SD 1.5 linear shapes and the conv table on the coop algorithm with
# SDGEN_COOP_SMALL_TILE, two rounds alternating.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
V="coop:64,64,32,2,2 coop:64,64,64,2,2 coop:64,64,16,2,2 coop:64,64,32,2,2,d coop:64,64,64,2,2,d coop:128,128,64,4,2 auto"
./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds 20 --reps 5 --json /tmp/linear.json \
  $V > "$OUT/linear.txt" 2>&1
echo "linear_bench rc=$?"
python3 - <<'PY'
import json, math, collections
t = collections.defaultdict(dict)
for r in json.load(open("/tmp/linear.json"))["rows"]:
    t[r["name"]][r["variant"]] = r
vs = []
for v in t.values():
    for k in v:
        if k not in vs: vs.append(k)
base = vs[0]
print("%-28s" % "shape" + "".join("%19s" % x[5:] for x in vs))
for name, v in t.items():
    print("%-28s" % name[:28] + "".join("%19s" % ("%.4f" % v[x]["ms"] if x in v and v[x]["ms"] > 0 else "-") for x in vs))
for new in vs[1:]:
    pairs = [(v[base], v[new]) for v in t.values() if base in v and new in v and v[base]["ms"] > 0 and v[new]["ms"] > 0]
    g = math.exp(sum(math.log(b["ms"] / a["ms"]) for a, b in pairs) / max(1, len(pairs)))
    print("%s: %d shapes, geomean new/base %.3f, per-step sum %.3f -> %.3f ms, max diff %.2e" % (new, len(pairs), g,
          sum(a["ms"] * a["per_step"] for a, b in pairs), sum(b["ms"] * b["per_step"] for a, b in pairs),
          max(b["max_rel_diff_vs_first"] for a, b in pairs)))
PY
for round in 1 2; do
  for v in "" 64,64,64,2,2 64,64,64,2,2,d; do
    SDGEN_COOP_SMALL_TILE=$v ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo coop \
      --json /tmp/conv-$round-${v:-default}.json > /dev/null 2>&1; echo "conv '${v:-default}' round $round rc=$?"
  done
done
python3 - <<'PY'
import json, os
vs = ["default", "64,64,64,2,2", "64,64,64,2,2,d"]
def load(p): return {r["layer"]: r for r in json.load(open(p))["rows"] if "median_ms" in r} if os.path.exists(p) else {}
runs = {(r, v): load("/tmp/conv-%d-%s.json" % (r, v)) for r in (1, 2) for v in vs}
print("%-20s %-26s %-14s" % ("layer", "shape", "tile") + "".join("%18s" % v for v in vs))
for k, row in runs[(1, "default")].items():
    cells = []
    for v in vs:
        a, b = runs[(1, v)].get(k), runs[(2, v)].get(k)
        cells.append("%7.4f/%-7.4f" % (a["median_ms"], b["median_ms"]) if a and b else "-")
    print("%-20s %-26s %-14s" % (k[:20], str(row["shape"])[:26], row["tile"][:14]) + "".join("%18s" % c for c in cells),
          " err " + " ".join("%.1e" % runs[(1, v)][k]["max_rel_vs_general"] for v in vs if k in runs[(1, v)]))
PY
