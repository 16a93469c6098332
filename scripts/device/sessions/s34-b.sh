#!/usr/bin/env bash
# Session 34, call B (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/bench/linear_bench` and `scripts/device/slim-tree.sh on`).
# The one-wave 64x160 tile (ops::chooseOneWaveTile; SDGEN_WAVE_TILE=0 turns it off): the tests with validation,
# SDXL's and SD 1.5's linear layers with the rule off and
# on (alternating processes), and SD 1.5's UNet step off / on / off / on.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
./build/default/app/sdgen --list-devices 2>&1 | grep -E "NVIDIA|multiprocessors" | head -3
SDGEN_VALIDATION=1 timeout 300 ./build/default/tests/ops/ops_tests \
  --gtest_filter='GemmSplitK.*:*CoopMatrixKernelWhereSupported*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|error" "$OUT/tests.log" | head -16
L=./build/default/bench/linear_bench
for r in off-1 on-1 off-2 on-2; do
  w=1; [ "${r%-*}" = off ] && w=0
  SDGEN_WAVE_TILE=$w timeout 100 $L bench/data/sdxl_linear_shapes.json --rounds 10 --json "$OUT/sdxl-$r.json" auto > "$OUT/sdxl-$r.txt" 2>&1
  SDGEN_WAVE_TILE=$w timeout 100 $L bench/data/sd15_linear_shapes.json --rounds 10 --json "$OUT/sd15-$r.json" auto > "$OUT/sd15-$r.txt" 2>&1
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for f in ("sdxl", "sd15"):
    runs = {r: json.load(open(f"{out}/{f}-{r}.json"))["rows"] for r in ("off-1", "on-1", "off-2", "on-2")}
    print(f"== {f}: ms per layer (off-1 on-1 off-2 on-2), kernel with the rule on; per-step sums last")
    sums = {r: 0.0 for r in runs}
    for i, row in enumerate(runs["off-1"]):
        for r in runs: sums[r] += runs[r][i]["ms"] * runs[r][i]["per_step"]
        print(f"{row['name']:20s} x{row['per_step']:3d} " + " ".join(f"{runs[r][i]['ms']:8.4f}" for r in runs)
              + f"  {runs['on-1'][i]['kernel']}")
    print("per step: " + " ".join(f"{r} {sums[r]:.3f}" for r in runs))
PY
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for r in off-1 on-1 off-2 on-2; do
  w=1; [ "${r%-*}" = off ] && w=0
  SDGEN_WAVE_TILE=$w timeout 100 ./build/default/tests/model_check/sdgen_model_check \
    --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/check-$r.txt" 2>&1
  echo "$r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$r.txt" | tr -s ' ' | sed 's/^/    /' | head -4
done
