#!/usr/bin/env bash
# Session 51, call B (issue 17; carry .gl .carry after `scripts/device/pack.sh build/default/app/libsdgen_cudnn_reference.so`
# and `scripts/device/slim-tree.sh on`): coop-winograd-rows' products GEMM with the next channel slice's window
# fetched beside the next B (s51-window-ahead.patch, on a copy of the shaders: every step of the halo3 tile's 1x3
# loop is a new slice, whose window load is otherwise synchronous) and that with V stored in 16-channel slices
# (s51-window-ahead-sliced.patch on top: a window row of a slice is 576 contiguous bytes instead of 18 pieces of 32
# bytes 256 apart; only the halo3 tile reads it right), against the committed shaders, alternating,
# 128 channels at 512^2 (rows forced by SDGEN_CONV_HALO=0) and 256 at 512^2; fresh caches; registers; launches.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
# (session 51 ran it with these files copied over the shaders; the patches make the same copies)
rm -rf /tmp/s51b /tmp/s51c && cp -r shaders /tmp/s51b && patch -s -d /tmp/s51b -p1 < scripts/device/sessions/s51-window-ahead.patch &&
  cp -r /tmp/s51b /tmp/s51c && patch -s -d /tmp/s51c -p1 < scripts/device/sessions/s51-window-ahead-sliced.patch ||
  { echo "the patches do not apply"; exit 1; }
for s in 1,128,128,512,512,3,1 1,256,256,512,512,3,1; do
  for v in committed ahead sliced committed ahead sliced; do
    dir=shaders; [ $v = ahead ] && dir=/tmp/s51b; [ $v = sliced ] && dir=/tmp/s51c
    rm -rf /tmp/c51b
    SDGEN_CONV_HALO=0 SDGEN_SHADER_DIR=$dir SDGEN_PIPELINE_STATS=1 SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c51b \
      timeout 90 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --shape $s > /tmp/row.txt 2>&1
    { echo "== $v $s"; cat /tmp/row.txt; } >> "$OUT/rows-b.txt"
    echo "== $v $s: $(awk '$4 == "tuned" {print $5, "ms", $17, $18, $19, $20}' /tmp/row.txt)"
    python3 -c "import json; e=json.load(open('/tmp/c51b/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:4]]"
    grep "^kernel" /tmp/row.txt | grep -v general | tr -s ' ' | cut -c1-110 | tr '\n' ';'; echo
    grep "pipeline stats" /tmp/row.txt | grep -i "rows gemm\|halo" | grep -o "^.\{0,90\}\|Register Count=[0-9]*" | paste - - | sort -u | cut -c1-150
  done
done
