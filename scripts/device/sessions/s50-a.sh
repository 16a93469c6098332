#!/usr/bin/env bash
# Prepared in session 49 for the next session (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): where the fused output
# transform's ~0.065 ms over the unfused GEMMs goes (256 channels at 512^2). Shader copies (SDGEN_SHADER_DIR; wrong
# numbers, timing only) of gemm_coop_rows.slang: (a) as committed; (b) no workgroup transforms (every one returns
# after counting); (c) no fences (the transform still runs); (d) neither the count nor the transform (returns at
# once: the GEMM with its M stores only). Forced onto the rows candidate by a fresh cache per process; each
# launch's time; the unfused form beside (SDGEN_WINOGRAD_ROWS_FUSED=0).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
f=shaders/linear/gemm_coop_rows.slang
for v in a b c d; do
  dir=/tmp/s50a-$v; rm -rf $dir; cp -r shaders $dir
  case $v in
    b) sed -i 's|  if (GemmCoopShared<WORDS>.mem\[0\].x == 0u) return;  // uniform|  return;|' $dir/linear/gemm_coop_rows.slang ;;
    c) sed -i 's|^  AllMemoryBarrier();|  // (no fence)|' $dir/linear/gemm_coop_rows.slang ;;
    d) sed -i 's|  uint\* counters = (uint\*)paramAddress(32);|  return;\n  uint* counters = (uint*)paramAddress(32);|' $dir/linear/gemm_coop_rows.slang ;;
  esac
  diff -q $f $dir/linear/gemm_coop_rows.slang > /dev/null && [ $v != a ] && echo "copy $v: sed matched nothing"
done
for run in 1 2; do
  for v in a b c d unfused; do
    rm -rf /tmp/c50a
    if [ $v = unfused ]; then env=(SDGEN_WINOGRAD_ROWS_FUSED=0); dir=shaders; else env=(); dir=/tmp/s50a-$v; fi
    env "${env[@]}" SDGEN_SHADER_DIR=$dir SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c50a timeout 60 \
      ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --shape 1,256,256,512,512,3,1 > /tmp/row.txt 2>&1
    { echo "== $v run $run"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
    echo "== $v run $run: $(awk '$4 == "tuned" {print $5, "ms", $17, $18, $19, $20}' /tmp/row.txt)"
    grep "^kernel" /tmp/row.txt | grep gemm | tr -s ' ' | tr '\n' ';'; echo
  done
done
