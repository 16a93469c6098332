#!/usr/bin/env bash
# Session 24, call A (carry .gl .carry .whl; `scripts/device/slim-tree.sh on` for the call), after
# `scripts/device/pack.sh build/default/bench/residency_probe_bench build/default/tests/ops/ops_tests`: how many
# workgroups an SM runs at once per workgroup size and shared memory (bench/residency_probe_bench: the occupancy
# that the GEMM tiles' 10-19 KB of shared memory allow), its test with validation, then the per-launch profile of
# SD 1.5's fp16 UNet step and VAE decode (scripts/device/profile-sd15.sh).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 120 ./build/default/tests/ops/ops_tests --gtest_filter='*ResidencyProbe*' > "$OUT/probe-test.log" 2>&1
echo "probe test rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/probe-test.log" | tr '\n' ' ')"
timeout 240 ./build/default/bench/residency_probe_bench --max-k 20 128,16 128,4096 128,8192 128,9728 128,12288 \
  128,16384 128,20480 128,24576 128,32768 128,49152 256,16 256,16384 256,19456 256,24576 256,32768 256,49152 \
  512,16 512,24576 > "$OUT/probe.txt" 2>&1
echo "probe rc=$?"; grep -vE "^  (heap|features|cooperative|  [0-9])" "$OUT/probe.txt" | tail -22
bash scripts/device/profile-sd15.sh
