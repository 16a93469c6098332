#!/usr/bin/env bash
# Session 58, call B (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`; it ran
# on call A's shaders with the variant in shaders_pf/, an untracked copy of shaders/ with the patch
# docs/perf-data/h100-2026-12-07-s58-b-window-ahead.patch; committed since for the fp16 tile only, so on today's
# code shaders_pf/ is call A's shaders with that patch): the column-of-taps halo3 tile with the next channel
# slice's window loaded into registers during the slice's last step (stored at the next slice's first step) against
# call A's form (loaded and stored at once). (1) the halo tests on the tensor cores with the variant and validation;
# (2) 128 at 512^2 and 256 -> 128 at 512^2, tuned with every halo tile (SDGEN_CONV_HALO=all), the two shader
# folders alternating (a fresh cache each), cuDNN beside, the tuner's fastest candidates and the registers.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_SHADER_DIR=$PWD/shaders_pf SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalo*' > "$OUT/halo-tests.log" 2>&1
echo "== halo tests (window ahead) rc $? at $SECONDS s"
grep -E "^\[  (PASSED|FAILED)|FAILED|Failure|validation\]" "$OUT/halo-tests.log" | head -20
grep -iE "max relative" "$OUT/halo-tests.log" | head -5
row() {  # shape, shader folder
  rm -rf /tmp/c58b
  SDGEN_SHADER_DIR=$PWD/$2 SDGEN_CONV_HALO=all SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c58b timeout 120 ./build/default/app/sdgen \
    --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $1 > /tmp/row.txt 2>&1
  { echo "== $1 $2"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  echo "== $1 $2 at $SECONDS s: $(awk '$4 == "tuned" {print $5, "ms p10", $9, "p90", $10, "rel", $13, "cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, $22}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c58b/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:4]]"
  grep -E "pipeline stats autotune.*halo3" /tmp/row.txt | sed "s/, Binary Size.*Shared/, Shared/; s/sdgen: pipeline stats autotune //" | sort -u | head -3
}
for d in shaders shaders_pf shaders shaders_pf; do row 1,128,128,512,512,3,1 $d; done
for d in shaders shaders_pf; do row 1,256,128,512,512,3,1 $d; done
echo "done at $SECONDS s"
