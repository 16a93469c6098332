#!/usr/bin/env bash
# Session 25, call E (carry .gl .carry; same bundle as call D): call D found a GEMM's epilogue storing at ~1.07 TB/s,
# ~4 bytes per clock per SM, whatever the tile. Hypothesis: every store of the epilogue loop re-reads the sink's
# parameter words (rowCoord, the strides and address of BufSink), which the compiler cannot keep in registers
# across global stores (the parameter block is a buffer-device-address load that may alias the output), and those
# re-reads wait on memory. Experiment (a copy of shaders/ through SDGEN_SHADER_DIR, valid only for these plain
# shapes: raw A at word 28, a dense fp16 output whose BufSink sits at word 35): the epilogue stores to an address
# read once before its loop. Same shapes, both shader folders.
# The word numbers are those of call E's 28-word GEMM header; with the 32-word header of call G the sink sits at 39.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/sh-hoist && cp -r shaders /tmp/sh-hoist
python3 - <<'PY'
p='/tmp/sh-hoist/linear/gemm_coop.slang'
s=open(p).read()
a='  uint64_t partials = SPLIT == 1 ? paramAddress(24) : 0;'
b='  storeOut4<S, VEC_S>(rowCoord(batch * M + m), n, N, v);'
assert a in s and s.count(b) == 1
s=s.replace(a, a + '\n  half* outBase = (half*)paramAddress(35);  // experiment: BufSink<35, F16Storage>, dense [M][N]')
s=s.replace(b, '  storeAligned<8>((half4*)(outBase + (batch * M + m) * N + n), half4(v));')
open(p,'w').write(s)
PY
for dir in shaders /tmp/sh-hoist; do
  echo "== shader folder $dir"
  SDGEN_SHADER_DIR=$PWD/$dir; [ "$dir" = /tmp/sh-hoist ] && SDGEN_SHADER_DIR=$dir
  SDGEN_SHADER_DIR=$SDGEN_SHADER_DIR timeout 200 ./build/default/bench/linear_bench scripts/device/sessions/s25-e-plain.json \
    --rounds 10 tiled coop:64,64,32,2,2 coop:128,128,32,4,2 2>&1 | cut -c1-140 | tee "$OUT/epilogue-$(basename $dir).txt"
done
