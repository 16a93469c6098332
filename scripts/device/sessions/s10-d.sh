#!/usr/bin/env bash
# Session 10, call D: every SD 1.5 linear shape with the engine's choice vs the same tiles accumulating in fp16
# within a slice (h) or throughout (H), compiled through spirv-opt (O).
set -uo pipefail
out=$OUT
source scripts/device/vulkan-env.sh
export SDGEN_CACHE_DIR=/tmp/cached
V="auto coop:64,64,32,2,2,O coop:64,64,32,2,2,h,O coop:64,64,32,2,2,H,O coop:128,128,32,4,2,h,O coop:128,128,32,4,2,H,O coop:128,128,32,4,4,H,O"
timeout 400 ./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds 10 --reps 5 --json $out/lind.json $V > $out/lind.log 2>&1
echo "bench rc=$?"
python3 - $out <<'PY'
import json,sys,math,collections
rows=json.load(open(sys.argv[1]+"/lind.json"))["rows"]
by=collections.defaultdict(dict)
for r in rows: by[r["name"]][r["variant"]]=r
vs=[v for v in by[next(iter(by))]]
logs=collections.defaultdict(float); n=0
for name,d in by.items():
    a=d["auto"]["ms"]; n+=1
    line=f"{name:22s} auto {a:.4f}"
    for v in vs[1:]:
        if v in d: logs[v]+=math.log(d[v]["ms"]/a); line+=f" | {d[v]['ms']/a:.2f} {d[v]['max_rel_diff_vs_first']:.1e}"
    print(line)
for v in vs[1:]: print(v, "geomean vs auto", round(math.exp(logs[v]/n),3))
PY
