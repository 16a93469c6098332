#!/usr/bin/env bash
# Session 14, call B (issues 22, 18), carry .gl .carry .whl, after `scripts/device/pack.sh` and
# `scripts/device/slim-tree.sh on`: (1) the full-size SDXL architecture (random weights, built and saved only):
# two 1024² fp16 images with -v (memory after Winograd F(4,3) ran in bands: its fp32 VAE decode held 7.9 GB of
# conv scratch before) and `--profile-conv` of its 1024² step and decode; (2) SD 1.5's cold run split into
# kernel compile and conv autotune (bench/residency.py --runs 1 --skip-diffusers).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
w=/tmp/sdxl; mkdir -p "$w"
python3 -c "
import pathlib, sys; sys.path.insert(0, 'tests/reference'); import make_sdxl_random as m
m.save(m.build(m.SDXL), pathlib.Path('$w/models'))" > "$OUT/make.log" 2>&1 || { tail -5 "$OUT/make.log"; exit 1; }
for i in 0 1; do
  ./build/default/app/sdgen -m "$w/models/sdxl-random" -p "a photo of an astronaut riding a horse on the moon" \
    -n blurry -W 1024 -H 1024 --steps 20 --sampler euler --cfg-scale 5 -s $((2 + i)) -o "$w/sdgen-$i.png" -v \
    > "$OUT/sdxl-$i.log" 2>&1; echo "sdxl run $i rc=$?"
done
grep -A16 "^timings" "$OUT/sdxl-1.log"; grep "conv autotune" "$OUT"/sdxl-*.log
./build/default/app/sdgen --profile-conv -m "$w/models/sdxl-random" -W 1024 -H 1024 --precision fp16 \
  --json "$OUT/profile-sdxl-fp16.json" > "$OUT/profile-sdxl-fp16.txt" 2>&1; echo "profile rc=$?"
grep -B2 -A10 "totals of" "$OUT/profile-sdxl-fp16.txt" | head -60
python3 bench/residency.py --sdgen ./build/default/app/sdgen --work /tmp/residency --runs 1 --skip-diffusers \
  --out "$OUT/residency-cold.json" 2>&1 | grep -E "^cold|run 1"
