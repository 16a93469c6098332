#!/usr/bin/env bash
# Session 54, call E (issue 17's results files on today's code; carry .gl .carry .whl after `scripts/device/pack.sh`
# and `scripts/device/slim-tree.sh on`): the fp16 table (fresh cache, cuDNN beside), then SD 1.5's --profile-conv
# fresh and on its cache. (`s47-f.sh` without the model check; the results files were session 47's.)
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SECONDS=0
(timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1; echo $? > /tmp/make15.rc) &
rm -rf /tmp/c; SDGEN_CACHE_DIR=/tmp/c timeout 260 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
  --reference cudnn --json "$OUT/h100-bench-conv2d-fp16.json" > "$OUT/h100-bench-conv2d-fp16.txt" 2>&1
echo "table rc=$? at $SECONDS s"
python3 - "$OUT/h100-bench-conv2d-fp16.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if r["algo"] == "tuned":
        print(f'{r["layer"]:18} {r["median_ms"]:.4f} cuDNN {r["cudnn"]["median_ms"]:.4f} ratio {r["ratio_vs_cudnn"]:.2f} {r["tile"]}')
print("geomean", d.get("geomean_ratio_vs_cudnn_best"))
PY
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
rm -rf /tmp/c54e-p
for run in fresh cached; do
  SDGEN_CACHE_DIR=/tmp/c54e-p timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/profile-$run.json" > "/tmp/profile-$run.txt" 2>&1
  echo "profile $run rc=$? at $SECONDS s"; [ -s "$OUT/profile-$run.json" ] || tail -5 "/tmp/profile-$run.txt"
  python3 -c "
import json; d = json.load(open('$OUT/profile-$run.json'))
print('autotune', {k: d['autotune'][k] for k in ('launches', 'problems_tuned', 'problems_from_cache', 'seconds')})
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
done
