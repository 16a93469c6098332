#!/usr/bin/env bash
# Session 35, call A (issue 22; carry .gl .carry after `scripts/device/pack.sh build/default/bench/attention_bench
# build/default/bench/linear_bench` and `scripts/device/slim-tree.sh on`). (1) Registers of the D-64
# accumulator-softmax tiles and their times: SDXL's 32^2 self-attention (BH 40 x 1024 rows) fills 1.2 waves of
# 8-subgroup workgroups (128 registers: 16 subgroups per SM); 4-subgroup workgroups without the register
# prefetch of the next key block, or with 16-key blocks, might fit 20 subgroups per SM (<= 96 registers), one
# wave. (2) SDXL's GEGLU projections with fp16 accumulators (session 23 measured them before later gains).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
B=./build/default/bench/attention_bench
V="cm2:32,1,8 cm2:32,1,8,0 cm2:32,1,4 cm2:32,1,4,0 cm2:16,1,4 cm2:16,1,4,0 cm2:16,1,8 cm2:16,1,8,0 cm2:64,1,4,0 cm2:16,1,2,0"
for s in "40 1024 1024" "20 4096 4096"; do
  echo "== BH Lq Lk: $s"
  SDGEN_PIPELINE_STATS=1 timeout 120 $B $s 64 20 $V > "$OUT/attn-$(echo $s | tr ' ' x).txt" 2>&1
  grep -E "^cm2" "$OUT/attn-$(echo $s | tr ' ' x).txt" | cut -c1-150
done
echo "== registers (attention)"
grep -i -E "regist|shared" "$OUT/attn-40x1024x1024.txt" | sort | uniq -c | cut -c1-220 | head -30
echo "== SDXL GEGLU, fp16 accumulators"
timeout 200 ./build/default/bench/linear_bench bench/data/sdxl_linear_shapes.json --rounds 10 --only geglu \
  auto coop:128,128,32,4,4,H,O coop:128,128,32,4,4,H coop:256,256,32,8,4,H,F2048,O coop:128,128,32,4,4,H,F1024,O \
  > "$OUT/geglu.txt" 2>&1; echo "geglu rc=$?"
cut -c1-170 "$OUT/geglu.txt" | grep -v "^#"
