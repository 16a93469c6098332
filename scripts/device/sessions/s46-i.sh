#!/usr/bin/env bash
# Session 46, call I (issue 17; carry as call H, the same bundle): what halo-f23's element-wise V and U arithmetic on
# operand matrices costs. A copy of the shaders in which multiplyHaloF23 multiplies the loaded fragments as they
# are (v = d, u = g: wrong numbers, the same loads and products; timing only), run through SDGEN_SHADER_DIR beside
# the real shaders, one process each, the two 256-channel 512^2 rows, every halo-f23 candidate's time.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
rm -rf /tmp/sh-noarith && cp -r shaders /tmp/sh-noarith
python3 - <<'PY'
p = '/tmp/sh-noarith/linear/gemm_coop_halo.slang'
s = open(p).read()
for a, b in [('CoopA v0 = d[0] - d[2], v1 = d[1] + d[2], v2 = d[2] - d[1], v3 = d[1] - d[3];',
              'CoopA v0 = d[0], v1 = d[1], v2 = d[2], v3 = d[3];'),
             ('CoopB s = g0 + g2;', ''),
             ('f23Product<ACC, MFC, MFH>(at + 1, v1, s + g1, mc, mh);', 'f23Product<ACC, MFC, MFH>(at + 1, v1, g1, mc, mh);'),
             ('f23Product<ACC, MFC, MFH>(at + 2, v2, s - g1, mc, mh);', 'f23Product<ACC, MFC, MFH>(at + 2, v2, g0, mc, mh);')]:
    assert s.count(a) == 1, a
    s = s.replace(a, b)
open(p, 'w').write(s)
PY
for dir in "$PWD/shaders" /tmp/sh-noarith; do
  for s in 1,256,256,512,512,3,1 1,256,128,512,512,3,1; do
    rm -rf /tmp/c46i
    SDGEN_SHADER_DIR=$dir SDGEN_CONV_HALO_F23=1 SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c46i timeout 90 \
      ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $s \
      > "$OUT/row-$(basename $dir)-${s//,/_}.txt" 2>&1
    echo "$(basename $dir) $s"
    grep "pipeline stats" "$OUT/row-$(basename $dir)-${s//,/_}.txt" | grep f23 | sed -E 's/.*autotune (.*) \[CS\]: Register Count=([0-9]+).*/\1 regs \2/' | sort -u | tr '\n' ';'; echo
    python3 - /tmp/c46i/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    print(e["problem"][:36], "| halo", round(e["ms"].get("coop 128x128 halo", 0), 4), "| f23",
          {k: round(v, 4) for k, v in e["ms"].items() if "f23" in k})
PY
  done
done
