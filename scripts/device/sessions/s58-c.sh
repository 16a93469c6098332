#!/usr/bin/env bash
# Session 58, call C (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`): issue 17's results
# files on the code with the halo tile's column-of-taps form (halo3, a default candidate from 16384 rows; its fp16 form
# with the next window ahead): the halo tests on the tensor cores with validation, the fp16 table (fresh cache, cuDNN
# beside), then SD 1.5's --profile-conv fresh and cached.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SECONDS=0
SDGEN_VALIDATION=1 timeout 120 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHaloWhereSupported*:Conv/ConvTest.CoopHaloEmulated/f16' > "$OUT/halo-tests.log" 2>&1
echo "== halo tests rc $? at $SECONDS s"
grep -E "^\[  (PASSED|FAILED)|FAILED|Failure|validation\]" "$OUT/halo-tests.log" | head -20
(timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1; echo $? > /tmp/make15.rc) &
rm -rf /tmp/c; SDGEN_CACHE_DIR=/tmp/c timeout 260 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
  --reference cudnn --json "$OUT/h100-bench-conv2d-fp16.json" > "$OUT/h100-bench-conv2d-fp16.txt" 2>&1
echo "table rc=$? at $SECONDS s"
python3 - "$OUT/h100-bench-conv2d-fp16.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if r["algo"] == "tuned":
        print(f'{r["layer"]:18} {r["median_ms"]:.4f} cuDNN {r["cudnn"]["median_ms"]:.4f} ratio {r["ratio_vs_cudnn"]:.2f} rel {r["max_rel_vs_general"]:.2e} {r["tile"]}')
print("geomean", d.get("geomean_ratio_vs_cudnn_best"))
PY
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
profile() {  # name, cache dir, small-winograd knob
  SDGEN_CONV_SMALL_WINOGRAD=$3 SDGEN_CACHE_DIR=$2 timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/profile-$1.json" > "/tmp/profile-$1.txt" 2>&1
  echo "profile $1 rc=$? at $SECONDS s"; [ -s "$OUT/profile-$1.json" ] || tail -5 "/tmp/profile-$1.txt"
  python3 -c "
import json; d = json.load(open('$OUT/profile-$1.json'))
print('autotune', {k: d['autotune'][k] for k in ('launches', 'problems_tuned', 'problems_from_cache', 'seconds', 'candidates_dropped')})
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
}
rm -rf /tmp/c58c
profile fresh /tmp/c58c 1
profile cached /tmp/c58c 1
