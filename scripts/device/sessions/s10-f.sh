#!/usr/bin/env bash
# Session 10, call F: EDGE 0 (no bounds checks where every tile is whole): correctness of the coop GEMM/conv
# tests (validation on), 4096^3 variants, every SD 1.5 linear shape on the engine's choice.
set -uo pipefail
out=$OUT
source scripts/device/vulkan-env.sh
export SDGEN_CACHE_DIR=/tmp/cachef
SDGEN_VALIDATION=1 timeout 300 ./build/default/tests/ops/ops_tests --gtest_filter='*CoopMatrixKernelWhereSupported*:GemmCoopRule.*:*CoopWhereSupported*:*RawHalf*:*GemmSplit*:*LinearGeglu*:*LinearNorm*' > $out/ops.log 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED|validation" $out/ops.log | head; grep "flush" $out/ops.log | grep f16 | awk '{print $NF}' | sort -g | tail -1
V="auto coop:256,256,32,8,4,H,O coop:256,256,32,8,4,H,F2048,O coop:256,256,32,8,4,H,F1024,O"
timeout 200 ./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --only "square 4096" --rounds 20 --reps 5 --json $out/lin.json $V > $out/lin.log 2>&1
echo "bench rc=$?"; grep -vE "^ " $out/lin.log | cut -c1-200
timeout 200 ./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds 10 --reps 5 --json $out/linall.json auto > $out/linall.log 2>&1
python3 - $out <<'PY'
import json,sys
rows=json.load(open(sys.argv[1]+"/linall.json"))["rows"]
print("sum of auto ms over SD shapes x per_step:", round(sum(r["ms"]*max(r.get("per_step",1),1) for r in rows if r["name"]!="square 4096"),4))
for r in rows: print(f'{r["name"]:22s} {r["ms"]:.4f}')
PY
