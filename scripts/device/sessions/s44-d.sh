#!/usr/bin/env bash
# Session 44, call D — prepared, not run (the budget ran out; for the next session). Issue 17; an experiment, not committed code: scripts/device/sessions/s44-d-halo-sync.patch on
# 4db79d0 (`git apply` it, rebuild sdgen and ops_tests); carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests` and
# `scripts/device/slim-tree.sh on`). SDGEN_HALO_SYNC=1: the halo window loaded and stored at a slice's first
# step, nothing held across the products, to bring the fp32 128x128 halo tile (156 registers) under 128 (two
# workgroups per SM). Register statistics and the two VAE rows, all halo tiles (SDGEN_CONV_HALO=all), with and
# without, one process each; the real tiles against float64 with it.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
for sync in 1 0; do
  for s in 1,256,128,512,512,3,1 1,256,256,512,512,3,1; do
    rm -rf /tmp/c44d
    if [ "$sync" = 1 ]; then export SDGEN_HALO_SYNC=1; else unset SDGEN_HALO_SYNC; fi
    SDGEN_CONV_HALO=all SDGEN_PIPELINE_STATS=1 SDGEN_CACHE_DIR=/tmp/c44d timeout 60 \
      ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned --reference cudnn --shape $s > /tmp/row.txt 2>&1
    grep "pipeline stats" /tmp/row.txt | grep halo | sed -E 's/.*autotune (.*) \[CS\]: Register Count=([0-9]+).*Local Memory Size=([0-9]+).*/\1 regs \2 local \3/' | sort -u | sed "s/^/sync=$sync /"
    python3 - /tmp/c44d/conv-tune-v1.json $sync <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    best = sorted(e["ms"].items(), key=lambda kv: kv[1])
    print("sync=" + sys.argv[2], e["problem"][:36], "|", ", ".join(f"{k} {v:.4f}" for k, v in best[:6]))
PY
  done
done
SDGEN_HALO_SYNC=1 SDGEN_VALIDATION=1 timeout 60 ./build/default/tests/ops/ops_tests \
  --gtest_filter='Conv/ConvTest.CoopHaloWhereSupported/f16:Conv/ConvTest.CoopHaloEmulated/f16' > "$OUT/tests.log" 2>&1
echo "tests (sync) rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"; grep -E "max relative|Failure" "$OUT/tests.log" | head -4
