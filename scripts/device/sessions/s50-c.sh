#!/usr/bin/env bash
# Session 50, call C (issue 17; same carry as s50-a.sh, after `git apply scripts/device/sessions/s50-bc-pingpong-and-next-input-rejected.patch`: its knobs): the fused output transform's items per trip
# (SDGEN_ROWS_OUT=OC,OI: 4,4 and 8,4 beside the default 4,2), one band of 88 tile rows (SDGEN_WINOGRAD_ROWS_BAND=88),
# and the next band's transform in the GEMM (SDGEN_WINOGRAD_ROWS_NEXT=1) with them; 256 and 128 channels at 512^2
# (128: SDGEN_CONV_HALO=0 so that the rows candidate is timed). Tuned, fresh cache per process; each launch's time;
# registers (SDGEN_PIPELINE_STATS=1).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
row() {  # name shape env...
  local name=$1 s=$2; shift 2
  rm -rf /tmp/c50c
  env "$@" SDGEN_PIPELINE_STATS=1 SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c50c timeout 60 \
    ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --shape $s > /tmp/row.txt 2>&1
  { echo "== $name $s $*"; cat /tmp/row.txt; } >> "$OUT/rows-c.txt"
  echo "== $name $s: $(awk '$4 == "tuned" {print $5, "ms", $17, $18, $19, $20}' /tmp/row.txt)"
  grep "^kernel" /tmp/row.txt | grep -v general | tr -s ' ' | cut -c1-160 | tr '\n' ';'; echo
  grep -i "register" /tmp/row.txt | grep -i "rows gemm" | sort -u | head -2 | cut -c1-200
}
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
  h=(); [ $s = 1,128,128,512,512,3,1 ] && h=(SDGEN_CONV_HALO=0)
  row base $s "${h[@]}"
  row out44 $s "${h[@]}" SDGEN_ROWS_OUT=4,4
  row out84 $s "${h[@]}" SDGEN_ROWS_OUT=8,4
  row out43 $s "${h[@]}" SDGEN_ROWS_OUT=4,3
  row band88 $s "${h[@]}" SDGEN_WINOGRAD_ROWS_BAND=88
  row next48-out44 $s "${h[@]}" SDGEN_WINOGRAD_ROWS_NEXT=1 SDGEN_WINOGRAD_ROWS_BAND=48 SDGEN_ROWS_OUT=4,4
  row next48 $s "${h[@]}" SDGEN_WINOGRAD_ROWS_NEXT=1 SDGEN_WINOGRAD_ROWS_BAND=48
  row base-again $s "${h[@]}"
done
