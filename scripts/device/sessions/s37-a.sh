#!/usr/bin/env bash
# Session 37 (no device: prepared for the next session), call A (issue 22; carry .gl .carry after
# `scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/bench/linear_bench` and
# `scripts/device/slim-tree.sh on`). The tail split (ops::chooseTailSplit, SDGEN_TAIL_SPLIT=1; gemm_coop.slang
# SPLIT 3/4) built without a device: its float64 tests with validation first (a failure there ends the call), then
# SDXL's 32^2 GEGLU projection on the 256x256 fp16-accumulator tile without and with tail splits, then SDXL's and
# SD 1.5's linear layers per step with the rule off / on / on plus the split tile on the 32^2 output projections
# (SDGEN_SPLIT_HALF_MIN_PART_K=448), alternating, one process each.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 240 ./build/default/tests/ops/ops_tests \
  --gtest_filter='GemmTailSplit.*:*TailSplitTest*:*LinearGeglu*:*CoopMatrixKernelWhereSupported*:GemmSplitK.*' \
  > "$OUT/tests.log" 2>&1
rc=$?
echo "ops tests rc=$rc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|VUID|^tail split" "$OUT/tests.log" | head -24 | cut -c1-200
[ $rc -eq 0 ] || exit 1
L=./build/default/bench/linear_bench S=scripts/device/sessions/s36-c-shapes.json
timeout 150 $L $S --rounds 20 --only "geglu 2048x10240" auto coop:256,256,32,8,4,H,O coop:256,256,32,8,4,H,t8448x2,O \
  coop:256,256,32,8,4,H,t8448x3,O coop:256,256,32,8,4,H,t8192x2,O coop:256,256,32,8,4,H,t7168x2,O \
  > "$OUT/geglu-tail.txt" 2>&1; echo "geglu tail variants rc=$?"
grep -vE "^\s*$" "$OUT/geglu-tail.txt" | tail -12 | cut -c1-220
# The 32^2 level's K-1280 projections (out, attn2 q, proj_in: 192 per step, 150-170 TFLOP/s on the one-wave 64x160
# tile) with fp16 accumulators on the same tile, through spirv-opt or not, and on the split 256x256 tile in 3 parts.
for row in "32x32 out" "32x32 attn2 q" "32x32 proj_in"; do
  timeout 60 $L bench/data/sdxl_linear_shapes.json --rounds 20 --only "$row" auto coop:64,160,32,2,5,H \
    coop:64,160,32,2,5,H,O coop:64,160,32,2,5,h,O coop:256,256,32,8,4,H,s3,O > "$OUT/k1280-${row// /-}.txt" 2>&1
  echo "$row variants rc=$?"
  grep -E "^32x32" "$OUT/k1280-${row// /-}.txt" | cut -c1-200
done
for r in off-1 tail-1 both-1 off-2 tail-2 both-2; do
  t=0; p=640
  [ "${r%-*}" != off ] && t=1
  [ "${r%-*}" = both ] && p=448
  SDGEN_TAIL_SPLIT=$t SDGEN_SPLIT_HALF_MIN_PART_K=$p timeout 100 $L bench/data/sdxl_linear_shapes.json --rounds 10 \
    --json "$OUT/sdxl-$r.json" auto > "$OUT/sdxl-$r.txt" 2>&1 || echo "sdxl $r failed: $(tail -2 "$OUT/sdxl-$r.txt")"
done
for r in off-1 both-1; do
  t=0; p=640; [ "$r" = both-1 ] && { t=1; p=448; }
  SDGEN_TAIL_SPLIT=$t SDGEN_SPLIT_HALF_MIN_PART_K=$p timeout 100 $L bench/data/sd15_linear_shapes.json --rounds 10 \
    --json "$OUT/sd15-$r.json" auto > "$OUT/sd15-$r.txt" 2>&1 || echo "sd15 $r failed"
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for f, rs in (("sdxl", ("off-1", "tail-1", "both-1", "off-2", "tail-2", "both-2")), ("sd15", ("off-1", "both-1"))):
    try:
        runs = {r: json.load(open(f"{out}/{f}-{r}.json"))["rows"] for r in rs}
    except (OSError, ValueError, KeyError) as e:
        print(f"== {f}: missing ({e})"); continue
    print(f"== {f}: ms per layer ({' '.join(rs)}), rows whose kernel changes; per-step sums last")
    sums = {r: 0.0 for r in runs}
    last = rs[2] if len(rs) > 2 else rs[1]
    for i, row in enumerate(runs["off-1"]):
        for r in runs: sums[r] += runs[r][i]["ms"] * runs[r][i]["per_step"]
        if any(runs[r][i]["kernel"] != row["kernel"] for r in runs):
            print(f"{row['name']:20s} x{row['per_step']:3d} " + " ".join(f"{runs[r][i]['ms']:8.4f}" for r in runs)
                  + f"  {runs[last][i]['kernel']}")
    print("per step: " + " ".join(f"{r} {sums[r]:.3f}" for r in runs))
PY
