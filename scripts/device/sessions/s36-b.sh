#!/usr/bin/env bash
# Session 36, call B (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`). The direct conv's halo in
# fp16 (shaders/conv/conv_direct.slang HALF; SDGEN_CONV_DIRECT_HALF=0 keeps fp32): the direct tests with
# validation and the pipeline statistics; the VAE and UNet conv_out rows beside cuDNN, off / on alternating; SD
# 1.5's profile off / on / off / on (VAE decode conv, one process each).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 SDGEN_PIPELINE_STATS=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*Direct*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|VUID|max relative error" "$OUT/tests.log" | head -12 | cut -c1-220
grep -iE "direct" "$OUT/tests.log" | grep -iE "regist|shared" | sort -u | head -6 | cut -c1-220
source scripts/device/cuda-env.sh >/dev/null 2>&1
for r in off-1 on-1 off-2 on-2; do
  h=1; [ "${r%-*}" = off ] && h=0
  for s in 1,128,3,512,512,3,1 2,320,4,64,64,3,1; do
    SDGEN_CONV_DIRECT_HALF=$h timeout 60 ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn \
      --shape $s --algo direct > "$OUT/bench-$r-$s.txt" 2>&1
    echo "bench $r $s: $(grep -E 'direct' "$OUT/bench-$r-$s.txt" | grep fp16 | tr -s ' ' | cut -c1-200 | head -2)"
  done
done
rm -rf /tmp/e2e
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
export SDGEN_CACHE_DIR=/tmp/cache15
for r in off-1 on-1 off-2 on-2; do
  h=1; [ "${r%-*}" = off ] && h=0
  SDGEN_CONV_DIRECT_HALF=$h timeout 100 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/profile-sd15-$r.json" > "$OUT/profile-sd15-$r.txt" 2>&1; echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
for r in ("off-1", "on-1", "off-2", "on-2"):
    d = json.load(open(f"{sys.argv[1]}/profile-sd15-{r}.json"))
    outs = []
    for g in d["graphs"]:
        for c in g["convs"]:
            if c["layer"].endswith("conv_out"): outs.append(f"{g['name']} conv_out {c['ms']:.4f} {c['candidate']}")
    print(r, " | ".join(f"{g['name']} {g['total_ms']:.3f} conv {g['by_type']['conv']['ms']:.3f}" for g in d["graphs"][:2]), "|", "; ".join(outs))
PY
rm -f "$OUT"/profile-sd15-*.txt
