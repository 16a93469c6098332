#!/usr/bin/env bash
# Session 45, call B (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`): the new defaults. The halo window loaded at a slice's first tap, the fp32
# `coop 128x128 halo` beside the fp16 one from 16384 rows, the 128x128 halo tiles split over input channels below
# 16384 rows (call A: 0.977 ms on 256 channels at 512^2, the UNet's 32^2 and 16^2 convs 20-30 % faster). The fp16
# table (results file, fresh cache), SD 1.5's --profile-conv fresh and on its cache (results file), the model
# check, the halo tests against float64 with validation. First the "halo3" tiles (16-channel slices, a K step of 3
# taps: 33 % fewer barriers per K; default candidates for this call) on the VAE's 512^2 rows, every candidate's time.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
(timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1; echo $? > /tmp/make15.rc) &
for s in 1,256,256,512,512,3,1 1,256,128,512,512,3,1; do
  rm -rf /tmp/c45b-r
  SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c45b-r timeout 90 ./build/default/app/sdgen --bench-conv2d \
    --precision fp16 --algo tuned --reference cudnn --shape $s > /tmp/row.txt 2>&1
  awk '$4 == "tuned" {print $1, $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21}' /tmp/row.txt
  grep "pipeline stats" /tmp/row.txt | grep halo | sed -E 's/.*autotune (.*) \[CS\]: Register Count=([0-9]+).*Local Memory Size=([0-9]+).*/\1 regs \2 local \3/' | sort -u | tr '\n' ';'; echo
  python3 - /tmp/c45b-r/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print(e["problem"][:36], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:8]))
PY
done
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
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
rm -rf /tmp/c45b-p
for run in fresh cached; do
  SDGEN_CACHE_DIR=/tmp/c45b-p timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/profile-$run.json" > "/tmp/profile-$run.txt" 2>&1
  echo "profile $run rc=$?"; [ -s "$OUT/profile-$run.json" ] || tail -5 "/tmp/profile-$run.txt"
  python3 -c "
import json; d = json.load(open('$OUT/profile-$run.json'))
print('autotune', {k: d['autotune'][k] for k in ('launches', 'problems_tuned', 'problems_from_cache', 'seconds')})
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
done
rm -rf /tmp/c45b-m; SDGEN_CACHE_DIR=/tmp/c45b-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalo*/f16:ConvHaloCompile.*' > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID|FAILED  \]|max relative|exception" "$OUT/tests.log" | head -10 | cut -c1-300
