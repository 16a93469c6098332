#!/usr/bin/env bash
# Measured and rejected (docs/perf.md session 56); runs only with the patch
# docs/perf-data/h100-2026-12-07-s56-b-two-b-slices.patch applied (not committed).
# Session 56, call B (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`): the
# halo tile with two B slices (SDGEN_CONV_HALO_DBUF=1: the next K step's B slice stored after the current step's
# products into a second buffer, one workgroup barrier per step instead of two, but where a channel slice's window is
# staged; GemmTile::doubleBuffer).
# (1) the halo tests on the tensor cores with two B slices and validation (float64 reference);
# (2) issue 17's two rows over 2x and two VAE neighbours, tuned, two B slices off and on alternating (a fresh cache
#     each; 128 at 512^2 with every halo tile, SDGEN_CONV_HALO=all), cuDNN beside: the tuner's halo candidates,
#     the bench, and the halo pipelines' registers.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_CONV_HALO_DBUF=1 SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHaloWhereSupported*:ConvHaloCandidatesTest.*' > "$OUT/halo-tests.log" 2>&1
echo "== halo tests rc $? at $SECONDS s"
grep -E "^\[  (PASSED|FAILED)|FAILED|Failure|validation\]" "$OUT/halo-tests.log" | head -20
grep -iE "max relative" "$OUT/halo-tests.log" | head -5
row() {  # shape, two B slices, SDGEN_CONV_HALO
  rm -rf /tmp/c56b
  SDGEN_CONV_HALO=${3:-1} SDGEN_CONV_HALO_DBUF=$2 SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c56b timeout 120 ./build/default/app/sdgen \
    --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $1 > /tmp/row.txt 2>&1
  { echo "== $1 dbuf $2"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  echo "== $1 dbuf $2 at $SECONDS s: $(awk '$4 == "tuned" {print $5, "ms p10", $9, "p90", $10, "cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, $22}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c56b/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:8]]"
  grep -E "pipeline stats autotune.*halo" /tmp/row.txt | sed "s/, Binary Size.*Shared/, Shared/; s/sdgen: pipeline stats autotune //" | sort -u | head -12
}
for p in 0 1 0 1; do row 1,128,128,512,512,3,1 $p all; done
for p in 0 1; do row 1,512,512,64,64,3,1 $p; done
for p in 0 1; do row 1,256,128,512,512,3,1 $p; done
for p in 0 1; do row 1,256,256,512,512,3,1 $p; done
