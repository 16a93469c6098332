#!/usr/bin/env bash
# Session 57, call A (carry .gl .carry after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# coop-winograd (F(2,3), the 256x256 / 256x128 fp16-accumulator tiles with the explicit V) as a candidate below
# 16384 rows (SDGEN_CONV_SMALL_WINOGRAD=1): (1) its tests on the tensor cores with validation (float64 reference);
# (2) the tuned rows with the knob off / on alternating (a fresh cache each), cuDNN beside, the tuner's fastest
# candidates and each launch's time (SDGEN_BENCH_KERNEL_TIMES=1).
# It ran on a build where =1 also offered the 256x128 tile below 16384 rows; on the committed code (2cd0cc8) the
# 256x256 tile from 2048 rows is the default (=1 changes nothing, =0 the old threshold) and the 256x128 tile needs
# SDGEN_CONV_HALF_WINOGRAD=1 (docs/perf.md, session 57).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 150 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopWinograd*' > "$OUT/winograd-tests.log" 2>&1
echo "== winograd tests rc $? at $SECONDS s"
grep -E "^\[  (PASSED|FAILED)|FAILED|Failure|validation\]" "$OUT/winograd-tests.log" | head -20
row() {  # shape, knob
  rm -rf /tmp/c57a
  SDGEN_CONV_SMALL_WINOGRAD=$2 SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c57a timeout 100 ./build/default/app/sdgen \
    --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $1 > /tmp/row.txt 2>&1
  { echo "== $1 small-winograd $2"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  echo "== $1 small $2 at $SECONDS s: $(awk '$4 == "tuned" {print $5, "ms p10", $9, "p90", $10, "rel", $13, "cuDNN", $15, "ratio", $16, $17, $18, $19, $20, $21, $22}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c57a/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:5]]"
  grep -E "^kernel" /tmp/row.txt | tail -4 | sed 's/^/   /'
}
for k in 0 1 0 1; do row 1,512,512,64,64,3,1 $k; done
for k in 0 1; do row 1,512,512,128,128,3,1 $k; done
for s in 2,640,640,32,32,3,1 2,1920,640,32,32,3,1 2,960,640,32,32,3,1; do for k in 0 1; do row $s $k; done; done
echo "done at $SECONDS s"
