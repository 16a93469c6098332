#!/usr/bin/env bash
# Session 44, call B (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`): the halo conv tiles (gemm_coop.slang A_MODE 6, opt-in SDGEN_CONV_HALO=1).
# Most needed first, each step writing under $OUT before the next: the halo tests against float64 with validation
# (and the existing flushed/split tiles, whose loop lost its flush block to flushChunk); the VAE's large rows tuned
# with the halo candidates beside the others (fresh cache, cuDNN in the same process, every candidate's tuning time,
# the driver's register statistics of the halo pipelines); SD 1.5's model check and --profile-conv with the halo
# candidates; then the fp16 conv table with them.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
(timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > "$OUT/make15.log" 2>&1; echo $? > /tmp/make15.rc) &
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalo*/f16:ConvHaloCompile.*:ConvHaloCandidatesTest.*:Conv/ConvTest.CoopHalfTileSplit*/f16' > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID|relative error|FAILED  \]" "$OUT/tests.log" | head -14 | cut -c1-200
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
rm -rf /tmp/c44b
for s in 1,256,128,512,512,3,1 1,256,256,512,512,3,1 1,128,128,512,512,3,1 1,512,512,256,256,3,1 1,512,256,256,256,3,1; do
  SDGEN_CONV_HALO=1 SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c44b timeout 60 ./build/default/app/sdgen --bench-conv2d \
    --precision fp16 --algo tuned --reference cudnn --shape $s > "$OUT/row-$s.txt" 2>&1
  row < "$OUT/row-$s.txt"
done
grep -h "pipeline stats" "$OUT"/row-*.txt | grep -E "halo|coop 256x256|coop 128x128" | sed -E 's/sdgen: pipeline stats //' | cut -c1-260 | sort -u | head -12
cp /tmp/c44b/conv-tune-v1.json "$OUT/conv-tune-halo.json" 2>/dev/null
python3 - /tmp/c44b/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    halo = [kv for kv in best if "halo" in kv[0]]
    print(e["problem"][:44], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:4]), "| halo:", ", ".join(f"{k} {v:.4f}" for k, v in halo))
PY
wait; [ "$(cat /tmp/make15.rc)" = 0 ] || { echo "make_sd15_random failed"; tail -5 "$OUT/make15.log"; }
rm -rf /tmp/c44b-m; SDGEN_CONV_HALO=1 SDGEN_CACHE_DIR=/tmp/c44b-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
rm -rf /tmp/c44b-p; SDGEN_CONV_HALO=1 SDGEN_CACHE_DIR=/tmp/c44b-p timeout 90 ./build/default/app/sdgen --profile-conv \
  -m /tmp/e2e/sd15-random -W 512 -H 512 --precision fp16 --json "$OUT/h100-profile-conv-sd15-fp16.json" > "$OUT/profile.txt" 2>&1
echo "profile rc=$?"
python3 -c "
import json; d = json.load(open('$OUT/h100-profile-conv-sd15-fp16.json'))
print('autotune', {k: d['autotune'][k] for k in ('launches', 'problems_tuned', 'problems_from_cache', 'seconds')})
for g in d['graphs']:
    print(g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})
for g in d['graphs']:
    for c in g.get('convs', []):
        if c.get('ms', 0) > 0.25: print('   ', g['name'], c.get('layer'), c.get('candidate'), round(c.get('ms', 0), 4))"
rm -rf /tmp/c; SDGEN_CONV_HALO=1 SDGEN_CACHE_DIR=/tmp/c timeout 240 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
  --reference cudnn --json "$OUT/h100-bench-conv2d-fp16.json" > "$OUT/h100-bench-conv2d-fp16.txt" 2>&1
echo "table rc=$?"; grep -E " tuned |geomean" "$OUT/h100-bench-conv2d-fp16.txt" | awk '{print $1, $5, $15, $16, $17, $18, $19, $20}' | tail -30
