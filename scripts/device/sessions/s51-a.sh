#!/usr/bin/env bash
# Prepared in session 50 for the next session (issue 17; carry .gl .carry after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): what coop-winograd-rows'
# products GEMM spends per tile beyond its K steps (~10.7 us of fixed cost per 128x128 tile against ~1.3 us per step,
# session 50), on 128 and 256 channels at 512^2 (128: SDGEN_CONV_HALO=0, so that the rows candidate runs). Shader
# copies (SDGEN_SHADER_DIR; wrong numbers, timing only) run on a tuning cache made first with the committed shaders,
# so that the tuned plan is the rows candidate whatever the copy computes (a fresh cache would reject a wrong copy,
# as session 50's call A found): (a) as committed; (b) no last-workgroup transform (every workgroup returns after
# counting); (c) no fences; (e) (b) and no M stores (a store under a never-true test keeps the products alive);
# (f) an empty input transform. Each launch's time.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rows=linear/gemm_coop_rows.slang core=linear/gemm_coop.slang input=conv/winograd_rows.slang
for v in a b c e f; do
  dir=/tmp/s51a-$v; rm -rf $dir; cp -r shaders $dir
  case $v in
    b) sed -i 's|  if (GemmCoopShared<WORDS>.mem\[0\].x == 0u) return;  // uniform|  return;|' $dir/$rows ;;
    c) sed -i 's|^  AllMemoryBarrier();|  // (no fence)|' $dir/$rows ;;
    e) sed -i 's|  if (GemmCoopShared<WORDS>.mem\[0\].x == 0u) return;  // uniform|  return;|' $dir/$rows
       sed -i 's|          F16Storage.store4(paramAddress(24), (batch \* M + m) \* N + n, v);|          if (v.x == 1.25e-30) F16Storage.store4(paramAddress(24), (batch * M + m) * N + n, v);|' $dir/$core ;;
    f) sed -i 's|^  if (item >= n \* tb \* w \* cq) return;|  if (item >= 0) return;|' $dir/$input ;;
  esac
  [ $v != a ] && diff -rq shaders $dir > /dev/null && echo "copy $v: sed matched nothing"
  [ $v = e ] && diff -q shaders/$core $dir/$core > /dev/null && echo "copy e: the M store's sed matched nothing"
done
for s in 1,128,128,512,512,3,1 1,256,256,512,512,3,1; do
  rm -rf /tmp/c51a
  for v in committed a b c e f a; do
    dir=/tmp/s51a-$v; [ $v = committed ] && dir=shaders
    SDGEN_CONV_HALO=0 SDGEN_SHADER_DIR=$dir SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c51a timeout 60 \
      ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --shape $s > /tmp/row.txt 2>&1
    { echo "== $v $s"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
    echo "== $v $s: $(awk '$4 == "tuned" {print $5, "ms", $17, $18, $19, $20}' /tmp/row.txt)"
    grep "^kernel" /tmp/row.txt | grep -v general | tr -s ' ' | cut -c1-110 | tr '\n' ';'; echo
  done
done
