#!/usr/bin/env bash
# Session 40, call B (issues 22, 17; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Usage: s40-b.sh [KNOBS...]
# (environment assignments for "on", default SDGEN_GEMM_FIXED_SHAPE=1). The knob in the whole step: SDXL's fp16 1024^2
# UNet step off / on / off / on beside diffusers' eager and CUDA-graph step in the same call (make_sdxl_random.py),
# parity against torch fp32 for each, each variant with its own tuning cache (the conv tuner times fixed-shape
# candidates when the knob is on); then SD 1.5's fp16 `--profile-conv` off / on with fresh caches (UNet step and VAE
# decode conv, tuning time).
set -uo pipefail
ON=("$@"); [ ${#ON[@]} -eq 0 ] && ON=(SDGEN_GEMM_FIXED_SHAPE=1)
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
echo "on: ${ON[*]}"
w=/tmp/sdxl; mkdir -p "$w"
timeout 200 python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "torch UNet step|CUDA graph|eager" "$OUT/make.log" | tail -4
for r in off-1 on-1 off-2 on-2; do
  rm -rf /tmp/sdxl-cache-$r
  if [ "${r%-*}" = on ]; then knobs=("${ON[@]}"); else knobs=(); fi
  env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/sdxl-cache-$r timeout 200 ./build/default/tests/model_check/sdgen_model_check \
    --refs "$w/refs/sdxl_random" --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$r.txt" 2>&1
  echo "$r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$r.txt" | tr -s ' ' | sed 's/^/    /' | head -6
done
rm -rf /tmp/e2e
timeout 120 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
for r in off on; do
  rm -rf /tmp/cache40b-$r
  if [ "$r" = on ]; then knobs=("${ON[@]}"); else knobs=(); fi
  env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/cache40b-$r timeout 150 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/profile-sd15-$r.json" > /tmp/profile-$r.txt 2>&1; echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
for r in ("off", "on"):
    d = json.load(open(f"{sys.argv[1]}/profile-sd15-{r}.json"))
    a = d["autotune"]
    print(r, f"tuned {a['problems_tuned']} in {a['seconds']:.2f} s ({a['launches']} launches) |",
          " | ".join(f"{g['name']} {g['total_ms']:.3f} " + " ".join(f"{k} {v['ms']:.3f}" for k, v in g['by_type'].items())
                     for g in d["graphs"][:3]))
PY
