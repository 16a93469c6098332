#!/usr/bin/env bash
# Session 40, call A (issues 22, 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/bench/linear_bench build/default/bench/attention_bench` and `scripts/device/slim-tree.sh on`). Two GEMM ideas measured before either
# becomes a rule (docs/perf.md, session 40):
# (1) the header's shape words compiled in (GemmTile::fixedShape, linear_bench ",X" / "auto,X";
#     SDGEN_GEMM_FIXED_SHAPE=1 for every tensor-core GEMM and conv of a process): NVIDIA's sample reaches 407 TFLOP/s
#     on 4096^3 with the design of our 256x256 fp16 tile (334 on the H100, session 10), and its M, N, K and strides
#     are specialization constants;
# (2) the 256x256 fp16-accumulator tile on 16-deep double-buffered slices (41.5 KB of shared memory: one barrier
#     per 16 of K instead of two per 32; the 32-deep pair does not fit 48 KB); and the 256x128 fp16-accumulator
#     tile (8 subgroups of 64x64) for the 64^2 level's N-640 layers (SDXL: 112-191 TFLOP/s on 128x128 fp32 today).
# The new tiles' tests with validation (the conv and GEGLU tests again with the knob on), then linear_bench on
# 4096^3, SDXL's per-step shapes (auto against auto,X in one process, interleaved) and (2) on SDXL's largest shapes.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
T=./build/default/tests/ops/ops_tests
SDGEN_VALIDATION=1 timeout 200 $T --gtest_filter='*CoopMatrixKernelWhereSupported*:*LinearNormOutput*:*HalfTileSplitWhereSupported*:*AttentionTailSplit*:*AccumulatorSoftmax*' \
  > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID|fixed|16x8 .*dbuf|x16 .*dbuf" "$OUT/tests.log" | head -14 | cut -c1-200
SDGEN_GEMM_FIXED_SHAPE=1 SDGEN_VALIDATION=1 timeout 240 $T \
  --gtest_filter='Conv/ConvTest.Coop*WhereSupported*:*GatedOutputWhereSupported*' > "$OUT/tests-fixed.log" 2>&1
echo "tests with SDGEN_GEMM_FIXED_SHAPE=1 rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests-fixed.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID" "$OUT/tests-fixed.log" | head -8 | cut -c1-200
echo "== the self-attentions' tail split (SDGEN_ATTENTION_TAIL_SPLIT via /tail): SDXL 32^2 (BH 40) and 64^2 (BH 20), D 64"
A=./build/default/bench/attention_bench
timeout 60 $A 40 1024 1024 64 10 coop coop/tail 2>&1 | tail -3 | cut -c1-200
timeout 90 $A 20 4096 4096 64 10 coop coop/tail 2>&1 | tail -3 | cut -c1-200
L=./build/default/bench/linear_bench
echo "== 4096^3 (variants interleaved in one process)"
timeout 150 $L bench/data/sd15_linear_shapes.json --only "square 4096" --rounds 10 \
  coop:256,256,32,8,4,H,F2048,O coop:256,256,32,8,4,H,F2048,O,X coop:256,256,16,8,4,H,d,O coop:256,256,16,8,4,H,d,O,X \
  coop:128,128,32,4,2 coop:128,128,32,4,2,X 2>&1 | tee "$OUT/square.txt" | cut -c1-160
echo "== SDXL per-step shapes: auto, auto,X"
timeout 240 $L bench/data/sdxl_linear_shapes.json --rounds 10 --json /tmp/sdxl-fixed.json auto auto,X > "$OUT/sdxl-fixed.txt" 2>&1
echo "rc=$?"
python3 - /tmp/sdxl-fixed.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
sums = {}
for r in rows:
    sums[r["variant"]] = sums.get(r["variant"], 0.0) + r["ms"] * r["per_step"]
by = {}
for r in rows: by.setdefault(r["name"], {})[r["variant"]] = r
for name, v in by.items():
    if "auto" in v and "auto,X" in v:
        print(f"{name:20s} x{v['auto']['per_step']:3d} {v['auto']['ms']:8.4f} -> {v['auto,X']['ms']:8.4f}  {v['auto']['kernel'][:70]}")
print("per step:", {k: round(s, 3) for k, s in sums.items()})
PY
echo "== SDXL's largest shapes on 16-deep double-buffered slices (2); the 64^2 level's N-640 layers on 256x128 and 256x160 tiles"
for s in "32x32 ff geglu" "32x32 attn1 qkv" "32x32 ff out" "64x64 ff geglu" "64x64 proj_in" "64x64 out" "64x64 ff out"; do
  [ $SECONDS -gt 540 ] && { echo "skipped $s (${SECONDS} s)"; continue; }
  timeout 90 $L bench/data/sdxl_linear_shapes.json --only "$s" --rounds 10 auto coop:256,256,32,8,4,H,O \
    coop:256,256,16,8,4,H,d,O coop:256,256,16,8,4,H,d,O,X coop:256,128,32,4,4,H,F2048,O coop:256,128,16,4,4,H,d,O \
    coop:256,160,32,4,5,H,F2048,O 2>&1 | grep -v "^shape" | cut -c1-170
done | tee "$OUT/sdxl-dbuf.txt"
echo "== SDXL's 32^2 K-1280 layers (40 tiles of 256x256 today, 3 parts of 448): one-wave tiles without a split"
# 128x160 (16 x 8 = 128 tiles: one wave unsplit, K 1280 in one fp16 sum) as 8 subgroups of 32x80 or 4 of 64x80; the
# one-wave 64x160 tile with fp16 accumulators; 256x160 in 2 parts (64 tiles x 2 = 128 workgroups).
for s in "32x32 out" "32x32 attn2 q" "32x32 proj_in"; do
  [ $SECONDS -gt 560 ] && { echo "skipped $s (${SECONDS} s)"; continue; }
  timeout 60 $L bench/data/sdxl_linear_shapes.json --only "$s" --rounds 10 auto coop:128,160,32,2,5,H,O \
    coop:128,160,32,4,5,H,O coop:64,160,32,2,5,H,O coop:256,160,32,4,5,H,O,s2 2>&1 | grep -v "^shape" | cut -c1-170
done | tee "$OUT/sdxl-k1280.txt"
