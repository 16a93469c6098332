#!/usr/bin/env bash
# Session 49, call B (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): why cuDNN ran the 128- and
# 256-channel 512^2 rows in 0.122 / 0.400 ms in session 47's table but 0.17-0.24 / 0.45-0.58 in one-row processes.
# Hypothesis: in a fresh process cudnnFind times its candidates while CUDA loads their modules lazily, and picks a
# slower kernel. (1) one-row processes with CUDA_MODULE_LOADING=EAGER; (2) the whole table, tuned rows only.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
rm -rf /tmp/c49b
for i in 1 2; do
  for s in 1,256,256,512,512,3,1 1,128,128,512,512,3,1; do
    CUDA_MODULE_LOADING=EAGER SDGEN_CACHE_DIR=/tmp/c49b timeout 120 ./build/default/app/sdgen --bench-conv2d \
      --precision fp16 --algo tuned --reference cudnn --shape $s > /tmp/row.txt 2>&1
    { echo "== eager process $i $s"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
    awk -v i=$i -v s=$s '$4 == "tuned" {print "eager", i, s, "ours", $5, "ms cuDNN", $15, "ratio", $16}' /tmp/row.txt
  done
done
for mode in LAZY EAGER; do
  start=$(date +%s)
  CUDA_MODULE_LOADING=$mode SDGEN_CACHE_DIR=/tmp/c49b timeout 400 ./build/default/app/sdgen --bench-conv2d \
    --precision fp16 --algo tuned --reference cudnn > /tmp/table.txt 2>&1
  echo "table $mode rc $? in $(( $(date +%s) - start )) s"
  { echo "== table $mode"; cat /tmp/table.txt; } >> "$OUT/rows.txt"
  awk -v m=$mode '$4 == "tuned" {print m, $1, "ours", $5, "cuDNN", $15, "ratio", $16}' /tmp/table.txt
  grep -i 'geometric' /tmp/table.txt
done
