#!/usr/bin/env bash
# Session 58, call A (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`): the
# 3x3 halo tile's BK-16 form ("halo3") stepping through a column of taps (ky 0..2 at one kx) with each window row
# loaded once for the three taps (gemm_coop_halo.slang multiplyHaloColumn: 6 A fragments per 24 products in the
# 64x32 warp tile instead of 12). (1) the halo tests on the tensor cores with validation (float64 reference);
# (2) 128 at 512^2, 256 -> 128 and 256 at 512^2, tuned with every halo tile (SDGEN_CONV_HALO=all), cuDNN beside:
# the tuner's fastest candidates and the halo pipelines' registers.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalo*:ConvHaloCandidatesTest.*' > "$OUT/halo-tests.log" 2>&1
echo "== halo tests rc $? at $SECONDS s"
grep -E "^\[  (PASSED|FAILED)|FAILED|Failure|validation\]" "$OUT/halo-tests.log" | head -20
grep -iE "max relative" "$OUT/halo-tests.log" | head -5
row() {  # shape, SDGEN_CONV_HALO
  rm -rf /tmp/c58a
  SDGEN_CONV_HALO=$2 SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c58a timeout 120 ./build/default/app/sdgen \
    --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $1 > /tmp/row.txt 2>&1
  { echo "== $1 halo $2"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  echo "== $1 halo $2 at $SECONDS s: $(awk '$4 == "tuned" {print $5, "ms p10", $9, "p90", $10, "rel", $13, "cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, $22}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c58a/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:8]]"
  grep -E "pipeline stats autotune.*halo" /tmp/row.txt | sed "s/, Binary Size.*Shared/, Shared/; s/sdgen: pipeline stats autotune //" | sort -u | head -12
}
row 1,128,128,512,512,3,1 all
row 1,128,128,512,512,3,1 all
row 1,256,128,512,512,3,1 all
row 1,256,256,512,512,3,1 all
echo "done at $SECONDS s"
