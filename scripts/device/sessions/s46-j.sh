#!/usr/bin/env bash
# Session 46, call J (issue 17; carry as call H, the same bundle): where the fp32 halo tile's time goes on the
# VAE's 256-channel 512^2 conv. Shader copies (SDGEN_SHADER_DIR; wrong numbers, timing only) of the halo loop
# without: the next step's B loads (noBload: the first B stored every step), the B stores too (noB), the window's
# loads and stores (noWin), both barriers of a step (noBar: races). One process each, the tuning times of
# `coop 128x128 halo` and `coop 128x128 f16acc halo`.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
mk() {  # mk NAME 'old1' 'new1' ['old2' 'new2' ...]: a shader copy with gemm_coop.slang edited
  local name=$1; shift
  rm -rf "/tmp/sh-$name" && cp -r shaders "/tmp/sh-$name"
  python3 - "/tmp/sh-$name/linear/gemm_coop.slang" "$@" <<'PY'
import sys
p, edits = sys.argv[1], sys.argv[2:]
s = open(p).read()
for a, b in zip(edits[::2], edits[1::2]):
    assert s.count(a) == 1, a
    s = s.replace(a, b)
open(p, 'w').write(s)
PY
}
B_LOAD='      if (s + 1 < steps)  // the next step'"'"'s B is in flight while this one is multiplied'
B_STORE='      storeSlice<0, BN, HALO_TAPS * BK, NT, A_PER, B_PER, WORDS>(tid, B_AT, ra, rb);'
WIN_LOAD='        fetchHalo<BK, NT, H_PER, HALO_WORDS>(tid, aAddr, haloOrigin, cg, slice * (BK / 8), rh);'
WIN_STORE='        storeHalo<BK, NT, H_PER, HALO_WORDS, WORDS>(tid, rh);'
BAR1='      GroupMemoryBarrierWithGroupSync();  // every subgroup is done reading the previous step'"'"'s B (and halo)'
BAR2='      }
      GroupMemoryBarrierWithGroupSync();
      int nextGroup'
mk noBload "$B_LOAD" '      if (s + 1 < 0)'
mk noB "$B_LOAD" '      if (s + 1 < 0)' "$B_STORE" '      if (s == 0) storeSlice<0, BN, HALO_TAPS * BK, NT, A_PER, B_PER, WORDS>(tid, B_AT, ra, rb);'
mk noWin "$WIN_LOAD" '        if (s == 0) fetchHalo<BK, NT, H_PER, HALO_WORDS>(tid, aAddr, haloOrigin, cg, slice * (BK / 8), rh);' \
  "$WIN_STORE" '        if (s == 0) storeHalo<BK, NT, H_PER, HALO_WORDS, WORDS>(tid, rh);'
mk noBar "$BAR1" '' "$BAR2" '      }
      int nextGroup'
for v in shaders noBload noB noWin noBar; do
  dir=/tmp/sh-$v; [ $v = shaders ] && dir=$PWD/shaders
  rm -rf /tmp/c46j
  SDGEN_SHADER_DIR=$dir SDGEN_CACHE_DIR=/tmp/c46j timeout 90 ./build/default/app/sdgen --bench-conv2d --precision fp16 \
    --algo tuned --reference cudnn --shape 1,256,256,512,512,3,1 > "$OUT/row-$v.txt" 2>&1
  python3 - /tmp/c46j/conv-tune-v1.json "$v" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    print(sys.argv[2], "| halo", round(e["ms"].get("coop 128x128 halo", 0), 4), "| f16acc halo",
          round(e["ms"].get("coop 128x128 f16acc halo", 0), 4))
PY
done
