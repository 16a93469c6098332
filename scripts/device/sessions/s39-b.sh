#!/usr/bin/env bash
# Session 39, call B (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/bench/linear_bench` and `scripts/device/slim-tree.sh on`).
# The split fp16-accumulator tile over the one-wave tile (ops::chooseWaveSplitHalfTile; opt-in, SDGEN_WAVE_SPLIT_HALF=1 turns
# it on) for SDXL's 32^2 K-1280 layers: the tests with validation, SDXL's linear layers off / on (one process
# each; no SD 1.5 shape meets the rule). Then SDXL's fp16 1024^2 UNet step on / off / on beside diffusers' eager and
# CUDA-graph step (make_sdxl_random.py), parity against torch fp32 for each, "on" also with the conv candidates of
# call A (SDGEN_CONV_HALF_WAVES=1: SDXL's ten 32^2 1280-channel convs in 6 parts; SDGEN_CONV_HALF_128=1), each
# variant with its own tuning cache.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_WAVE_SPLIT_HALF=1 SDGEN_VALIDATION=1 timeout 240 ./build/default/tests/ops/ops_tests \
  --gtest_filter='GemmSplitK.*:*CoopMatrixKernelWhereSupported*:*LinearNorm*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|VUID|fused layer norm M 2048|f16acc split" "$OUT/tests.log" | head -16 | cut -c1-200
L=./build/default/bench/linear_bench
for r in off-1 on-1; do
  h=1; [ "${r%-*}" = off ] && h=0
  SDGEN_WAVE_SPLIT_HALF=$h timeout 100 $L bench/data/sdxl_linear_shapes.json --rounds 10 --json "$OUT/sdxl-$r.json" auto > "$OUT/sdxl-$r.txt" 2>&1
done
python3 - "$OUT" <<'PY'
import json, sys
out, rs = sys.argv[1], ("off-1", "on-1")
runs = {r: json.load(open(f"{out}/sdxl-{r}.json"))["rows"] for r in rs}
print("== sdxl: ms per layer (off-1 on-1), rows whose kernel changes; per-step sums last")
sums = {r: 0.0 for r in runs}
for i, row in enumerate(runs["off-1"]):
    for r in runs: sums[r] += runs[r][i]["ms"] * runs[r][i]["per_step"]
    if runs["on-1"][i]["kernel"] != runs["off-1"][i]["kernel"]:
        print(f"{row['name']:20s} x{row['per_step']:3d} " + " ".join(f"{runs[r][i]['ms']:8.4f}" for r in runs)
              + f"  {runs['off-1'][i]['kernel']} -> {runs['on-1'][i]['kernel']}")
print("per step: " + " ".join(f"{r} {sums[r]:.3f}" for r in runs))
PY
rm -f "$OUT"/sdxl-*.json
w=/tmp/sdxl; mkdir -p "$w"
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "torch UNet step|CUDA graph|eager" "$OUT/make.log" | tail -4
for r in on-1 off-1 on-2; do
  h=1; [ "${r%-*}" = off ] && h=0
  SDGEN_CACHE_DIR=/tmp/sdxl-cache-${r%-*} SDGEN_CONV_HALF_WAVES=$h SDGEN_CONV_HALF_128=$h SDGEN_WAVE_SPLIT_HALF=$h timeout 150 ./build/default/tests/model_check/sdgen_model_check --refs "$w/refs/sdxl_random" \
    --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$r.txt" 2>&1
  echo "$r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$r.txt" | tr -s ' ' | sed 's/^/    /' | head -6
done
