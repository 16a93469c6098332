#!/usr/bin/env bash
# Session 43, call A (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/tests/model_check/sdgen_model_check build/default/app/libsdgen_cudnn_reference.so` and
# `scripts/device/slim-tree.sh on`). Session 42 made two conv candidates defaults after one short call each:
# coop-winograd 256x256 with an explicit V (Cin >= 512 from 16384 rows: 512 channels at 256^2 0.755 ms against
# 1.038, 512 -> 256 0.487 against 0.560) and the unsplit 256x256 coop tile with even fp16 chunks flushed to planes
# (256 channels at 512^2: 1.052 ms, error 4.88e-3). Here: the tests with validation; the four VAE rows near 2x,
# three processes each (rounds 1-2 with SDGEN_CONV_HALF_WINOGRAD=1, the exploratory set; round 3 with =0, the
# implicit GEMM alone), cuDNN in the same process, every candidate's tuning time; then SD 1.5's model check (the
# decoder's parity with these defaults) and the decode's --profile-conv with and without the Winograd candidate
# (the upsampler must keep coop's phase form; session 41's decode conv: 9.04 ms).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalfTileSplit*/f16:Conv/ConvTest.CoopWinograd*/f16:WinogradInputTest.*' \
  > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID" "$OUT/tests.log" | head -8 | cut -c1-200
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
# Round 1 and 2 with SDGEN_CONV_HALF_WINOGRAD=1 (the coop-winograd fp16 tiles, now on an explicit V, timed beside
# the implicit GEMM's candidates), round 3 without: the tuner's choice and each candidate's time (cache of round 1).
rm -rf /tmp/c43a-1 /tmp/c43a-2 /tmp/c43a-3
for s in 1,512,512,256,256,3,1 1,256,256,512,512,3,1 1,512,256,256,256,3,1 1,256,128,512,512,3,1; do
  for r in 1 2 3; do
    knob=1; [ $r = 3 ] && knob=0
    SDGEN_CONV_HALF_WINOGRAD=$knob SDGEN_CACHE_DIR=/tmp/c43a-$r timeout 100 ./build/default/app/sdgen --bench-conv2d \
      --precision fp16 --algo tuned --reference cudnn --shape $s 2>&1 | row
  done
done
cp /tmp/c43a-1/conv-tune-v1.json "$OUT/" 2>/dev/null
python3 - /tmp/c43a-1/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])[:5]
    print(e["problem"][:44], "|", ", ".join(f"{k} {v:.4f}" for k, v in best))
PY
timeout 150 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > "$OUT/make15.log" 2>&1 || { tail -5 "$OUT/make15.log"; exit 1; }
rm -rf /tmp/c43a-m; SDGEN_CACHE_DIR=/tmp/c43a-m timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 --repetitions 30 > "$OUT/check-sd15.txt" 2>&1
echo "sd15 check rc=$?"; grep -E "rel err|GPU time" "$OUT/check-sd15.txt" | tr -s ' ' | cut -c1-160
for v in default w0; do
  knob=(); [ $v = w0 ] && knob=(SDGEN_CONV_HALF_WINOGRAD=0)
  rm -rf /tmp/c43a-p; env "${knob[@]}" SDGEN_CACHE_DIR=/tmp/c43a-p timeout 90 ./build/default/app/sdgen --profile-conv \
    -m /tmp/e2e/sd15-random -W 512 -H 512 --precision fp16 --json "$OUT/profile-sd15-$v.json" > /dev/null 2>&1
  python3 -c "
import json; d = json.load(open('$OUT/profile-sd15-$v.json'))
for g in d['graphs']:
    print('$v', g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})
for g in d['graphs']:
    for c in g.get('convs', []):
        if 'winograd' in str(c.get('candidate', '')) or 'upsample' in c.get('layer', ''):
            print('   ', g['name'], c['layer'], c.get('candidate'), round(c.get('ms', 0), 4))"
done
