#!/usr/bin/env bash
# Session 47, call F (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`): the defaults with coop-winograd-rows (Winograd F(6,3) along the rows, halo3 tile)
# among the candidates — the fp16 table (results file, fresh cache), SD 1.5's --profile-conv fresh and on its cache
# (results file), then SD 1.5's model check (its own fresh cache).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
[ "${1:-}" = table ] || (timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1; echo $? > /tmp/make15.rc) &
rm -rf /tmp/c; SDGEN_CACHE_DIR=/tmp/c timeout 240 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
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
[ "${1:-}" = table ] && exit 0  # `s45-c.sh table`: the table only (what the device budget allowed)
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
rm -rf /tmp/c47f-p
for run in fresh cached; do
  SDGEN_CACHE_DIR=/tmp/c47f-p timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/profile-$run.json" > "/tmp/profile-$run.txt" 2>&1
  echo "profile $run rc=$?"; [ -s "$OUT/profile-$run.json" ] || tail -5 "/tmp/profile-$run.txt"
  python3 -c "
import json; d = json.load(open('$OUT/profile-$run.json'))
print('autotune', {k: d['autotune'][k] for k in ('launches', 'problems_tuned', 'problems_from_cache', 'seconds')})
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
done
rm -rf /tmp/c47f-m; SDGEN_CACHE_DIR=/tmp/c47f-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
