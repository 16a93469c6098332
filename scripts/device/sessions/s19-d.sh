#!/usr/bin/env bash
# Session 19, call D (issues 17/19), carry .gl .carry, after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/bench/linear_bench` and `slim-tree.sh on`: the coop GEMM with two slices in flight in registers
# (DBUF 2, tile flag ",p") — its tests with validation, the SD 1.5 conv rows on the coop algorithm with the
# large-problem tile as is and with ",p" (SDGEN_COOP_BIG_TILE; errors against the general kernel), twice
# alternating, and linear_bench over the SD 1.5 linear shapes and 4096^3. Rejected (1.2x slower): the variant was
# removed afterwards, so this script needs the tree of that call (docs/perf.md, session 19).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopMatrixKernelWhereSupported*:GemmCoopRule.*' > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/ops.log" | head -5
grep -E "pf2" "$OUT/ops.log" | head -12
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
for round in 1 2; do
  for v in "" 128,128,32,4,2,p; do
    SDGEN_COOP_BIG_TILE=$v ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo coop \
      --json /tmp/conv-$round-${v:-default}.json > /dev/null 2>&1; echo "conv '${v:-default}' round $round rc=$?"
  done
done
python3 - <<'PY'
import json
def load(p): return {r["layer"]: r for r in json.load(open(p))["rows"]}
a1, b1 = load("/tmp/conv-1-default.json"), load("/tmp/conv-1-128,128,32,4,2,p.json")
a2, b2 = load("/tmp/conv-2-default.json"), load("/tmp/conv-2-128,128,32,4,2,p.json")
for k in a1:
    if k not in b1: continue
    print("%-22s %-28s %8.4f %8.4f | %8.4f %8.4f  err %.2e %.2e  %s" % (k, a1[k]["shape"], a1[k]["median_ms"], b1[k]["median_ms"],
          a2[k]["median_ms"], b2[k]["median_ms"], a1[k]["max_rel_vs_general"], b1[k]["max_rel_vs_general"], b1[k]["kernels"][-40:]))
PY
./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds 20 --reps 5 --json /tmp/linear.json \
  coop:128,128,32,4,2 coop:128,128,32,4,2,p coop:64,64,32,2,2 coop:64,64,32,2,2,p > "$OUT/linear.txt" 2>&1
echo "linear_bench rc=$?"; grep -E "square 4096" "$OUT/linear.txt"
python3 - <<'PY'
import json, math, collections
t = collections.defaultdict(dict)
for r in json.load(open("/tmp/linear.json"))["rows"]:
    t[r["name"]][r["variant"]] = r
for base, new in (("coop:128,128,32,4,2", "coop:128,128,32,4,2,p"), ("coop:64,64,32,2,2", "coop:64,64,32,2,2,p")):
    pairs = [(v[base], v[new]) for v in t.values() if base in v and new in v and v[base]["ms"] > 0 and v[new]["ms"] > 0]
    g = math.exp(sum(math.log(b["ms"] / a["ms"]) for a, b in pairs) / max(1, len(pairs)))
    print("%s: %d shapes, geomean new/base %.3f, per-step sum %.3f -> %.3f ms, max diff %.2e" % (new, len(pairs), g,
          sum(a["ms"] * a["per_step"] for a, b in pairs), sum(b["ms"] * b["per_step"] for a, b in pairs),
          max(b["max_rel_diff_vs_first"] for a, b in pairs)))
PY
