#!/usr/bin/env bash
# Session 49, call D (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`): coop-winograd-rows with its filters packed once and the output transform in the
# products GEMM (A_MODE 9) — the rows tests with validation; 256 and 128 channels at 512^2 tuned beside cuDNN with
# and without the fused output (SDGEN_WINOGRAD_ROWS_FUSED=0), fresh cache per process, each launch's time; then
# the fp16 table (results file, fresh cache), SD 1.5's --profile-conv fresh and on its cache, SD 1.5's model check.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
(timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1; echo $? > /tmp/make15.rc) &
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests --gtest_filter='*WinogradRows*' > "$OUT/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "FAILED|PASSED|relative error|Failure" "$OUT/tests.txt" | sort | uniq -c | head -30
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
  for fused in 0 1 0 1; do
    rm -rf /tmp/c49d
    SDGEN_WINOGRAD_ROWS_FUSED=$fused SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c49d timeout 60 \
      ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $s > /tmp/row.txt 2>&1
    echo "== fused $fused $s rc=$?"; { echo "== fused $fused $s"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
    awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, "err", $12}' /tmp/row.txt
    grep "^kernel" /tmp/row.txt | grep -v "general" | tail -5
    python3 - /tmp/c49d/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print("  ", ", ".join(f"{k} {v:.4f}" for k, v in best[:5]))
PY
  done
done
[ "${1:-}" = ab ] && exit 0  # `s49-d.sh ab`: the tests and the A/B only (an H200, or little device time)
rm -rf /tmp/c; SDGEN_CACHE_DIR=/tmp/c timeout 200 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
  --reference cudnn --json "$OUT/h100-bench-conv2d-fp16.json" > "$OUT/h100-bench-conv2d-fp16.txt" 2>&1
echo "table rc=$?"
python3 - "$OUT/h100-bench-conv2d-fp16.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if r["algo"] == "tuned":
        print(f'{r["layer"]:18} {r["median_ms"]:.4f} cuDNN {r["cudnn"]["median_ms"]:.4f} ratio {r["ratio_vs_cudnn"]:.2f} {r["tile"]}')
print("geomean", d.get("geomean_ratio_vs_cudnn_best"))
PY
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
rm -rf /tmp/c49d-p
for run in fresh cached; do
  SDGEN_CACHE_DIR=/tmp/c49d-p timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/profile-$run.json" > "/tmp/profile-$run.txt" 2>&1
  echo "profile $run rc=$?"; [ -s "$OUT/profile-$run.json" ] || tail -5 "/tmp/profile-$run.txt"
  python3 -c "
import json; d = json.load(open('$OUT/profile-$run.json'))
print('autotune', {k: d['autotune'][k] for k in ('launches', 'problems_tuned', 'problems_from_cache', 'seconds')})
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
done
rm -rf /tmp/c49d-m; SDGEN_CACHE_DIR=/tmp/c49d-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
