#!/usr/bin/env bash
# Session 55, call B (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`), on
# the fused split-K sum (gemm_coop.slang SPLIT 5, SDGEN_SPLIT_FUSED_SUM=1) with the ablation patch applied for (2)
# (docs/perf-data/h100-2026-12-07-s55-b-ablate.patch, not committed):
# (1) the fused sum's test and the split tests on the tensor cores with validation;
# (3) where the halo tile's time goes on 128 channels at 512^2: the tuner's time of the halo candidates (A_MODE 6)
#     with parts of their loop left out (SDGEN_GEMM_ABLATE: 1 fragment loads and MMAs, 2 output stores, 3 B-slice
#     global loads after the first, 4 window global loads, 5 the loop's barriers), baseline first and last;
# (2) 512 channels at 64^2 tuned, cuDNN beside, the sum in a second launch and fused, alternating (a cache each);
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECONDS=0
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*FusedSplitSum*:*CoopHaloEmulated*:*LinearNormOutput*:*SplitK*' > "$OUT/fused-tests.log" 2>&1
echo "== tests rc $? at $SECONDS s"; grep -E "^\[  (PASSED|FAILED)|FAILED|Failure|validation\]" "$OUT/fused-tests.log" | head
rm -rf /tmp/c55f0 /tmp/c55f1
for f in 0 1 0 1; do
  SDGEN_SPLIT_FUSED_SUM=$f SDGEN_CACHE_DIR=/tmp/c55f$f timeout 100 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo tuned --reference cudnn --shape 1,512,512,64,64,3,1 > /tmp/row.txt 2>&1
  { echo "== fused $f"; cat /tmp/row.txt; } >> "$OUT/fused-512at64.txt"
  echo "== fused $f at $SECONDS s: $(awk '$4 == "tuned" {print $5, "ms p10", $9, "p90", $10, "cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c55f$f/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:4]]"
done
for a in 0 1 2 3 4 5 0; do
  rm -rf /tmp/c55b
  env $( [ $a != 0 ] && echo SDGEN_GEMM_ABLATE=$a ) SDGEN_CACHE_DIR=/tmp/c55b timeout 100 ./build/default/app/sdgen \
    --bench-conv2d --precision fp16 --algo tuned --shape 1,128,128,512,512,3,1 --reps 3 --warmup 1 > /tmp/row.txt 2>&1
  { echo "== ablate $a"; cat /tmp/row.txt; } >> "$OUT/ablate.txt"
  echo "== ablate $a at $SECONDS s: $(python3 -c "import json; e=json.load(open('/tmp/c55b/conv-tune-v1.json'))['entries'][0]['ms']; print(' '.join(k + ' ' + str(round(v, 4)) for k, v in sorted(e.items()) if 'halo' in k and 'rows' not in k))")"
done
