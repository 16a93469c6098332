#!/usr/bin/env bash
# Session 20, call A (issues 17/19), carry .gl .carry, after `scripts/device/pack.sh build/default/bench/linear_bench`
# and `slim-tree.sh on`: the coop GEMM's small-problem tile (64x64 of 4 subgroups of 32x32, the bucket of every
# UNet linear and most UNet convs) against tiles of larger warp tiles with few subgroups: 128x64 and 64x128 of 4
# subgroups of 64x32 / 32x64, 64x64 of 2 subgroups of 64x32 / 32x64, 128x128 of 4 of 64x64. linear_bench over
# the SD 1.5 linear shapes (outputs compared with the first variant), the conv table on the coop algorithm with
# SDGEN_COOP_SMALL_TILE (the rule's small tile), and the pipelines' register counts (SDGEN_PIPELINE_STATS=1).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
V="coop:64,64,32,2,2 coop:128,64,32,4,2 coop:64,128,32,2,4 coop:64,64,32,4,2 coop:64,64,32,2,4 coop:128,128,32,4,4 coop:128,128,32,4,2"
SDGEN_PIPELINE_STATS=1 ./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --only "64x64 attn1 out" \
  --rounds 2 --reps 2 $V > "$OUT/stats.txt" 2>&1; echo "stats rc=$?"
grep -iE "register|spill|shared|gemm_coop|main" "$OUT/stats.txt" | head -60
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
print("%-28s" % "shape" + "".join("%20s" % x[5:] for x in vs))
for name, v in t.items():
    print("%-28s" % name[:28] + "".join("%20s" % ("%.4f" % v[x]["ms"] if x in v and v[x]["ms"] > 0 else "-") for x in vs))
for new in vs[1:]:
    pairs = [(v[base], v[new]) for v in t.values() if base in v and new in v and v[base]["ms"] > 0 and v[new]["ms"] > 0]
    g = math.exp(sum(math.log(b["ms"] / a["ms"]) for a, b in pairs) / max(1, len(pairs)))
    print("%s: %d shapes, geomean new/base %.3f, per-step sum %.3f -> %.3f ms, max diff %.2e" % (new, len(pairs), g,
          sum(a["ms"] * a["per_step"] for a, b in pairs), sum(b["ms"] * b["per_step"] for a, b in pairs),
          max(b["max_rel_diff_vs_first"] for a, b in pairs)))
best = sum(min(v[x]["ms"] for x in vs if x in v and v[x]["ms"] > 0) * v[base]["per_step"] for v in t.values() if base in v)
print("per-step sum, best variant per shape: %.3f ms" % best)
PY
for round in 1 2; do
  for v in "" 128,64,32,4,2 64,128,32,2,4 64,64,32,4,2 64,64,32,2,4; do
    SDGEN_COOP_SMALL_TILE=$v ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo coop \
      --json /tmp/conv-$round-${v:-default}.json > /dev/null 2>&1; echo "conv '${v:-default}' round $round rc=$?"
  done
done
python3 - <<'PY'
import json, os
vs = ["default", "128,64,32,4,2", "64,128,32,2,4", "64,64,32,4,2", "64,64,32,2,4"]
def load(p): return {r["layer"]: r for r in json.load(open(p))["rows"]} if os.path.exists(p) else {}
runs = {(r, v): load("/tmp/conv-%d-%s.json" % (r, v)) for r in (1, 2) for v in vs}
print("%-22s %-30s" % ("layer", "shape") + "".join("%16s" % v for v in vs))
for k, row in runs[(1, "default")].items():
    cells = []
    for v in vs:
        a, b = runs[(1, v)].get(k), runs[(2, v)].get(k)
        cells.append("%7.4f/%-7.4f" % (a["median_ms"], b["median_ms"]) if a and b else "-")
    print("%-22s %-30s" % (k[:22], str(row["shape"])[:30]) + "".join("%16s" % c for c in cells),
          " err " + " ".join("%.1e" % runs[(1, v)][k]["max_rel_vs_general"] for v in vs if k in runs[(1, v)]))
PY
