#!/usr/bin/env bash
# Session 50, call D (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`): coop-winograd-rows in one band where V and M fit 192 MiB each
# (kWinogradRowsBandBytes) — the rows tests with validation; 256 and 128 channels at 512^2 tuned beside cuDNN in
# three processes each (fresh cache, each launch's time); the fp16 table (results file, fresh cache); SD 1.5's
# --profile-conv fresh and on its cache; SD 1.5's model check.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
(timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1; echo $? > /tmp/make15.rc) &
SDGEN_VALIDATION=1 timeout 100 ./build/default/tests/ops/ops_tests --gtest_filter='*WinogradRows*' > "$OUT/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "FAILED|PASSED|max relative error" "$OUT/tests.txt" | sort | uniq -c | head
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
  for run in 1 2 3; do
    rm -rf /tmp/c50d
    SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c50d timeout 60 ./build/default/app/sdgen --bench-conv2d \
      --precision fp16 --algo tuned --reference cudnn --shape $s > /tmp/row.txt 2>&1
    { echo "== $s run $run"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
    echo "== $s run $run: $(awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20}' /tmp/row.txt)"
    grep "^kernel" /tmp/row.txt | grep -v general | tail -4 | tr -s ' ' | cut -c1-120 | tr '\n' ';'; echo
    python3 -c "import json; e=json.load(open('/tmp/c50d/conv-tune-v1.json'))['entries'][0]['ms']; print('  tuning', sorted(e.items(), key=lambda kv: kv[1])[:3])"
  done
done
rm -rf /tmp/c; SDGEN_CACHE_DIR=/tmp/c timeout 200 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
  --reference cudnn --json "$OUT/h100-bench-conv2d-fp16.json" > "$OUT/h100-bench-conv2d-fp16.txt" 2>&1
echo "table rc=$?"
python3 - "$OUT/h100-bench-conv2d-fp16.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if r["algo"] == "tuned" and (r["ratio_vs_cudnn"] > 1.5 or "@512" in r["layer"]):
        print(f'{r["layer"]:18} {r["median_ms"]:.4f} cuDNN {r["cudnn"]["median_ms"]:.4f} ratio {r["ratio_vs_cudnn"]:.2f} {r["tile"]}')
print("geomean", d.get("geomean_ratio_vs_cudnn_best"))
PY
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
rm -rf /tmp/c50d-p
for run in fresh cached; do
  SDGEN_CACHE_DIR=/tmp/c50d-p timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/profile-$run.json" > "/tmp/profile-$run.txt" 2>&1
  echo "profile $run rc=$?"; [ -s "$OUT/profile-$run.json" ] || tail -5 "/tmp/profile-$run.txt"
  python3 -c "
import json; d = json.load(open('$OUT/profile-$run.json'))
print('autotune', {k: d['autotune'][k] for k in ('launches', 'problems_tuned', 'problems_from_cache', 'seconds')})
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
done
rm -rf /tmp/c50d-m; SDGEN_CACHE_DIR=/tmp/c50d-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
