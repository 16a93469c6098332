#!/usr/bin/env bash
# Session 37 (prepared for the next session), call D (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/ops/ops_tests build/default/tests/model_check/sdgen_model_check` and
# `scripts/device/slim-tree.sh on`; also build/default/app/libsdgen_cudnn_reference.so for the bench rows). Two opt-in
# conv changes built without a device: the 256x256 fp16-accumulator tile in K parts as an autotune candidate
# (SDGEN_CONV_HALF_SPLIT=1) and the direct conv's products on tensor cores (SDGEN_CONV_DIRECT_COOP=1; the VAE's and
# the UNet's conv_out). The conv tests with validation (a failure ends the call); the conv_out rows beside cuDNN,
# off / on alternating; SD 1.5's fp16 profile off / on / off / on (both knobs), each with a fresh tuning cache (one
# process each; the tuner's choices, the VAE decode's conv time, the tuning time); SD 1.5's parity against torch
# with both on and the "on" cache.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 240 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopHalfTileSplit*:*HalfTileSplitCandidate*:Conv/ConvTest.Coop*:*Direct*' > "$OUT/tests.log" 2>&1
rc=$?
echo "ops tests rc=$rc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|got|VUID|256x256|max relative" "$OUT/tests.log" | head -16 | cut -c1-220
[ $rc -eq 0 ] || exit 1
source scripts/device/cuda-env.sh >/dev/null 2>&1
for r in off-1 on-1 off-2 on-2; do
  h=1; [ "${r%-*}" = off ] && h=0
  for sh in 1,128,3,512,512,3,1 2,320,4,64,64,3,1; do
    SDGEN_CONV_DIRECT_COOP=$h timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn \
      --shape $sh --algo direct > "$OUT/bench-$r-${sh//,/_}.txt" 2>&1
    echo "bench $r $sh: $(grep -E 'direct' "$OUT/bench-$r-${sh//,/_}.txt" | grep fp16 | tr -s ' ' | cut -c1-200 | head -2)"
  done
done
rm -rf /tmp/e2e
timeout 120 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
for r in off-1 on-1 off-2 on-2; do
  h=1; [ "${r%-*}" = off ] && h=0
  rm -rf "/tmp/cache37-$r"
  SDGEN_CONV_HALF_SPLIT=$h SDGEN_CONV_DIRECT_COOP=$h SDGEN_CACHE_DIR="/tmp/cache37-$r" timeout 120 ./build/default/app/sdgen --profile-conv \
    -m /tmp/e2e/sd15-random -W 512 -H 512 --precision fp16 --json "$OUT/profile-sd15-$r.json" \
    > "$OUT/profile-sd15-$r.txt" 2>&1; echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
for r in ("off-1", "on-1", "off-2", "on-2"):
    d = json.load(open(f"{sys.argv[1]}/profile-sd15-{r}.json"))
    a = d["autotune"]
    print(r, f"tuned {a['problems_tuned']} in {a['seconds']:.2f} s ({a['launches']} launches) |",
          " | ".join(f"{g['name']} {g['total_ms']:.3f} conv {g['by_type']['conv']['ms']:.3f}" for g in d["graphs"][:2]))
    for g in d["graphs"]:
        for c in g["convs"]:
            if "256x256" in c.get("candidate", "") or c["layer"].endswith("conv_out"):
                print(f"    {g['name']}: {c['layer']} {c['ms']:.4f} {c['candidate']} {c['kernels'][-1]['label'] if c.get('kernels') else ''}")
PY
rm -f "$OUT"/profile-sd15-*.txt
SDGEN_CONV_HALF_SPLIT=1 SDGEN_CONV_DIRECT_COOP=1 SDGEN_CACHE_DIR=/tmp/cache37-on-2 timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/sd15-check-on.txt" 2>&1
echo "sd15 check (on) rc=$?"; grep -E "rel err" "$OUT/sd15-check-on.txt" | tr -s ' ' | sed 's/^/    /'
