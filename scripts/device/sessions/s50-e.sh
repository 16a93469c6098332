#!/usr/bin/env bash
# Session 50, call E (issue 17; carry .gl .carry after `scripts/device/pack.sh build/default/app/libsdgen_cudnn_reference.so`
# and `scripts/device/slim-tree.sh on`): 128 channels at 512^2 with the exploratory halo tiles (SDGEN_CONV_HALO=all:
# 256x128 and halo3 forms, fp32 and fp16 accumulators) in the tuner, beside cuDNN, three processes; the tuner's
# eight fastest.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
for run in 1 2 3; do
  rm -rf /tmp/c50e
  SDGEN_CONV_HALO=all SDGEN_PIPELINE_STATS=1 SDGEN_BENCH_KERNEL_TIMES=1 SDGEN_CACHE_DIR=/tmp/c50e timeout 90 \
    ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --reference cudnn \
    --shape 1,128,128,512,512,3,1 > /tmp/row.txt 2>&1
  { echo "== run $run"; cat /tmp/row.txt; } >> "$OUT/rows-e.txt"
  echo "== run $run: $(awk '$4 == "tuned" {print $5, "ms cuDNN", $15, "ratio", $16, $17, $18, $19, $20}' /tmp/row.txt)"
  python3 -c "import json; e=json.load(open('/tmp/c50e/conv-tune-v1.json'))['entries'][0]['ms']; [print('  ', k, round(v, 4)) for k, v in sorted(e.items(), key=lambda kv: kv[1])[:8]]"
  grep "pipeline stats autotune" /tmp/row.txt | grep -o "autotune [^[]*\[CS\]: Register Count=[0-9]*" | sort -u | cut -c1-150
done
