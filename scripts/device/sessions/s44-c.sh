#!/usr/bin/env bash
# Session 44, call C (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`): the halo tiles as default candidates (call B: 128x128 fp16 accumulators took
# the VAE's 512^2 rows), with the next slice's halo fetched after the products (its registers off the products'
# peak) and the 256x128 halo tile of 16 subgroups of 64x32 (fp32 and fp16 accumulators; B staged once per 256
# pixels). Each step writes under $OUT before the next: the halo tests against float64 with validation; the VAE's
# large rows tuned (fresh cache, cuDNN beside, every candidate's time, register statistics); the fp16 conv table
# (results file); SD 1.5's --profile-conv (results file) and its second run on that cache; the model check.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
(timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > "$OUT/make15.log" 2>&1; echo $? > /tmp/make15.rc) &
SDGEN_VALIDATION=1 timeout 120 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalo*/f16:ConvHaloCompile.*:ConvHaloCandidatesTest.*' > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID|FAILED  \]|max relative" "$OUT/tests.log" | head -10 | cut -c1-200
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
rm -rf /tmp/c44c
for s in 1,256,128,512,512,3,1 1,256,256,512,512,3,1 1,128,128,512,512,3,1 1,512,256,256,256,3,1; do
  SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c44c timeout 60 ./build/default/app/sdgen --bench-conv2d \
    --precision fp16 --algo tuned --reference cudnn --shape $s > "$OUT/row-${s//,/_}.txt" 2>&1
  row < "$OUT/row-${s//,/_}.txt"
done
grep -h "pipeline stats" "$OUT"/row-*.txt | grep -E "halo" | sed -E 's/sdgen: pipeline stats //' | cut -c1-200 | sort -u | head -10
cp /tmp/c44c/conv-tune-v1.json "$OUT/conv-tune-halo.json" 2>/dev/null
python3 - /tmp/c44c/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    halo = [kv for kv in best if "halo" in kv[0]]
    print(e["problem"][:44], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:3]), "| halo:", ", ".join(f"{k} {v:.4f}" for k, v in halo))
PY
rm -rf /tmp/c; SDGEN_CACHE_DIR=/tmp/c timeout 240 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
  --reference cudnn --json "$OUT/h100-bench-conv2d-fp16.json" > "$OUT/h100-bench-conv2d-fp16.txt" 2>&1
echo "table rc=$?"; grep -E " tuned |geometric" "$OUT/h100-bench-conv2d-fp16.txt" | awk '$5 > 0.2 || /geometric/ {print $1, $5, $15, $16, $17, $18, $19, $20}' | tail -12
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 "$OUT/make15.log"; }
rm -rf /tmp/c44c-p
for run in fresh cached; do
  SDGEN_CACHE_DIR=/tmp/c44c-p timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/profile-$run.json" > "$OUT/profile-$run.txt" 2>&1
  echo "profile $run rc=$?"
  python3 -c "
import json; d = json.load(open('$OUT/profile-$run.json'))
print('autotune', {k: d['autotune'][k] for k in ('launches', 'problems_tuned', 'problems_from_cache', 'seconds')})
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
done
python3 -c "
import json; d = json.load(open('$OUT/profile-fresh.json'))
for g in d['graphs']:
    for c in g.get('convs', []):
        if c.get('ms', 0) > 0.2: print('   ', g['name'], c.get('layer'), c.get('candidate'), round(c.get('ms', 0), 4))"
rm -rf /tmp/c44c-m; SDGEN_CACHE_DIR=/tmp/c44c-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
