#!/usr/bin/env bash
# Session 55, call A (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`): the
# "halo16" tile (128x64, 4 subgroups, 16-deep one-tap steps, ~11 KB of shared memory: four workgroups per SM where
# the 128x128 halo tile's 23 KB allow two). (1) the halo tests on the tensor cores with validation (float64
# reference); (2) issue 17's two rows over 2x and two VAE neighbours, tuned with SDGEN_CONV_HALO16=1 (the new tile
# timed beside the old ones in one process), cuDNN beside, the tuner's 8 fastest candidates, and the pipelines'
# registers (SDGEN_PIPELINE_STATS=1).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 240 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHalo*:ConvHaloCompile.*:ConvHaloCandidatesTest.*' > "$OUT/halo-tests.log" 2>&1
echo "== halo tests rc $? at $SECONDS s"
grep -E "^\[  (PASSED|FAILED)|FAILED|Failure|validation\]" "$OUT/halo-tests.log" | head -20
grep -iE "128x64.*halo16|halo16.*error|max relative" "$OUT/halo-tests.log" | head -20
for shape in 1,128,128,512,512,3,1 1,512,512,64,64,3,1 1,256,128,512,512,3,1 1,256,256,512,512,3,1; do
  rm -rf /tmp/c55a
  SDGEN_CONV_HALO16=1 SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c55a timeout 150 ./build/default/app/sdgen \
    --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $shape > /tmp/row.txt 2>&1
  { echo "== $shape"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  echo "== $shape at $SECONDS s: $(awk '$4 == "tuned" {print $5, "ms p10", $9, "p90", $10, "cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, $22}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c55a/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:8]]"
  grep -E "pipeline stats.*halo" /tmp/row.txt | sed "s/, Binary Size.*Shared/, Shared/" | head -12
done
# (3) the split-K sum with 4 parts' loads in flight (new default) against one at a time (SDGEN_SPLIT_SUM_UNROLL=1),
# on the tuner's choice for 512 channels at 64^2 (one cache, tuned once), alternating
rm -rf /tmp/c55s
for u in 4 1 4 1; do
  SDGEN_SPLIT_SUM_UNROLL=$u SDGEN_CACHE_DIR=/tmp/c55s timeout 150 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo tuned --shape 1,512,512,64,64,3,1 > /tmp/row.txt 2>&1
  { echo "== unroll $u"; cat /tmp/row.txt; } >> "$OUT/split-sum.txt"
  echo "== split sum unroll $u: $(awk '$4 == "tuned" {print $5, "ms p10", $9, "p90", $10, $(NF-3), $(NF-2), $(NF-1), $NF}' /tmp/row.txt)"
done
