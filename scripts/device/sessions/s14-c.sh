#!/usr/bin/env bash
# Session 14, call C (issues 22, 18), carry .gl .carry .whl, after `scripts/device/pack.sh` and
# `scripts/device/slim-tree.sh on`: `--profile-conv` of the full-size SDXL architecture's 1024² fp16 step
# (random weights, built and saved only; where its 88 ms go), then SD 1.5's cold run after the autotune stopped
# timing Winograd next to coop (bench/residency.py --runs 1 --skip-diffusers).
set -uo pipefail
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
w=/tmp/sdxl; mkdir -p "$w"
python3 -c "
import pathlib, sys; sys.path.insert(0, 'tests/reference'); import make_sdxl_random as m
m.save(m.build(m.SDXL), pathlib.Path('$w/models'))" > "$OUT/make.log" 2>&1 || { tail -5 "$OUT/make.log"; exit 1; }
./build/default/app/sdgen --profile-conv -m "$w/models/sdxl-random" -W 1024 -H 1024 --precision fp16 \
  --json "$OUT/profile-sdxl-fp16.json" > "$OUT/profile-sdxl-fp16.txt" 2>&1; echo "profile rc=$?"
grep -A9 "totals of" "$OUT/profile-sdxl-fp16.txt" | head -40; grep "autotune" "$OUT/profile-sdxl-fp16.txt"
python3 bench/residency.py --sdgen ./build/default/app/sdgen --work /tmp/residency --runs 1 --skip-diffusers \
  --out "$OUT/residency-cold.json" 2>&1 | grep -E "^cold|run 1"
