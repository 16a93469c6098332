#!/usr/bin/env bash
# Session 50, call A's second half (issue 17; same carry as s50-a.sh, after `git apply scripts/device/sessions/s50-bc-pingpong-and-next-input-rejected.patch`: its knobs): how much of coop-winograd-rows' input
# transforms can be hidden, on 256 and 128 channels at 512^2 (128: SDGEN_CONV_HALO=0, so that the rows candidate is
# the one timed). (e) a shader copy whose input transform returns at once (wrong numbers, timing only: the bound of
# any overlap); SDGEN_WINOGRAD_ROWS_PINGPONG=1 (two V buffers: band b + 1's input transform has no hazard on band
# b's GEMM and may run in its last wave); SDGEN_WINOGRAD_ROWS_NEXT=1 (band b + 1's input transform inside band b's
# products GEMM; SDGEN_ROWS_NEXT_IPT items per invocation), with SDGEN_WINOGRAD_ROWS_BAND=T tile rows per band.
# Tuned, fresh cache per process; each launch's time; the tuner's four fastest.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
dir=/tmp/s50b-e; rm -rf $dir; cp -r shaders $dir
sed -i 's|^  if (item >= n \* tb \* w \* (cin / 4)) return;|  if (item >= 0) return;|' $dir/conv/winograd_rows.slang
diff -q shaders/conv/winograd_rows.slang $dir/conv/winograd_rows.slang > /dev/null && echo "copy e: sed matched nothing"
row() {  # name shape env...
  local name=$1 s=$2; shift 2
  rm -rf /tmp/c50b
  env "$@" SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c50b timeout 60 \
    ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --shape $s > /tmp/row.txt 2>&1
  { echo "== $name $s $*"; cat /tmp/row.txt; } >> "$OUT/rows-b.txt"
  echo "== $name $s: $(awk '$4 == "tuned" {print $5, "ms", $17, $18, $19, $20}' /tmp/row.txt)"
  grep "^kernel" /tmp/row.txt | grep -v general | tr -s ' ' | cut -c1-160 | tr '\n' ';'; echo
  python3 - /tmp/c50b/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print("  ", ", ".join(f"{k} {v:.4f}" for k, v in best[:4]))
PY
}
for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
  h=(); [ $s = 1,128,128,512,512,3,1 ] && h=(SDGEN_CONV_HALO=0)
  row base $s "${h[@]}"
  row no-input-transform $s "${h[@]}" SDGEN_SHADER_DIR=$dir
  row pingpong $s "${h[@]}" SDGEN_WINOGRAD_ROWS_PINGPONG=1
  row pingpong-band24 $s "${h[@]}" SDGEN_WINOGRAD_ROWS_PINGPONG=1 SDGEN_WINOGRAD_ROWS_BAND=24
  for b in 48 32 24 16; do row next-band$b $s "${h[@]}" SDGEN_WINOGRAD_ROWS_NEXT=1 SDGEN_WINOGRAD_ROWS_BAND=$b; done
  for ipt in 4 16; do row next-band32-ipt$ipt $s "${h[@]}" SDGEN_WINOGRAD_ROWS_NEXT=1 SDGEN_WINOGRAD_ROWS_BAND=32 SDGEN_ROWS_NEXT_IPT=$ipt; done
  row next-band32-again $s "${h[@]}" SDGEN_WINOGRAD_ROWS_NEXT=1 SDGEN_WINOGRAD_ROWS_BAND=32
  row base-again $s "${h[@]}"
done
