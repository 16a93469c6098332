#!/usr/bin/env bash
# Session 46, call E (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): the fp32 halo tile through
# spirv-opt (SDGEN_HALO_OPT=1) against -O0, registers and the VAE's 256-channel 512^2 rows, one process each.
# (SDGEN_HALO_OPT was removed after this call: the fp32 halo tiles stay at -O0.)
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
for opt in 1 0; do
  for s in 1,256,256,512,512,3,1 1,256,128,512,512,3,1; do
    rm -rf /tmp/c46e
    SDGEN_HALO_OPT=$opt SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c46e timeout 90 \
      ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $s \
      > "$OUT/row-opt$opt-${s//,/_}.txt" 2>&1
    echo "opt $opt"; row < "$OUT/row-opt$opt-${s//,/_}.txt"
    grep "pipeline stats" "$OUT/row-opt$opt-${s//,/_}.txt" | grep halo | sed -E 's/.*autotune (.*) \[CS\]: Register Count=([0-9]+).*/\1 regs \2/' | sort -u | tr '\n' ';'; echo
    python3 - /tmp/c46e/conv-tune-v1.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print(e["problem"][:36], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:5]))
PY
  done
done
