#!/usr/bin/env bash
# Session 37 (prepared for the next session), call B (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Usage: s37-b.sh [HALF [WAVE [FUSED]]]
# (the attention's fp16 accumulation to try, 1-3, from call C; default 3; WAVE: SDGEN_WAVE_TILE's form for the linear
# knobs, e.g. HO where call A's K-1280 rows won on coop:64,160,32,2,5,H,O; FUSED=1: the fused Winograd conv
# candidates in the "all" runs' autotune, with their own tuning cache, where s38-a.sh found them faster, FUSED=h
# their fp16-accumulator forms too; session 38; default none). SDXL's fp16 1024^2 UNet step, one process
# each, alternating: base (every new knob off), all (the tail split, the 448-deep split tile on the 32^2 output
# projections and the attention's fp16 accumulation), attention alone, the linear knobs alone, base, all; beside
# diffusers' eager and CUDA-graph step in the same call (make_sdxl_random.py), parity against torch fp32 for each,
# and the GPU clock sampled during one run (session 36's bench/step-gap lead).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
w=/tmp/sdxl; mkdir -p "$w"; export SDGEN_CACHE_DIR=/tmp/sdxl-cache
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "torch UNet step|CUDA graph|eager" "$OUT/make.log" | tail -4
HALF=${1:-3} WAVE=${2:-} FUSED=${3:-}
for r in base-1 all-1 attention-1 linear-1 base-2 all-2; do
  t=0; p=640; h=0; wt=; fw=; cache=/tmp/sdxl-cache
  case "${r%-*}" in all) t=1; p=448; h=$HALF; wt=$WAVE; fw=$FUSED ;; attention) h=$HALF ;; linear) t=1; p=448; wt=$WAVE ;; esac
  fh=; [ "$fw" = h ] && { fw=1; fh=1; }
  [ -n "$fw" ] && cache=/tmp/sdxl-cache-fused
  if [ "$r" = all-2 ]; then
    nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 200 > "$OUT/clocks-step.txt" &
    smi=$!
  fi
  SDGEN_TAIL_SPLIT=$t SDGEN_SPLIT_HALF_MIN_PART_K=$p SDGEN_ATTENTION_HALF_ACC=$h SDGEN_WAVE_TILE=$wt SDGEN_COOP_WINOGRAD_FUSED=$fw \
    SDGEN_COOP_WINOGRAD_HALF_ACC=$fh SDGEN_CACHE_DIR=$cache timeout 150 \
    ./build/default/tests/model_check/sdgen_model_check \
    --refs "$w/refs/sdxl_random" --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$r.txt" 2>&1
  echo "$r rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$r.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  grep -E "rel err" "$OUT/check-$r.txt" | tr -s ' ' | sed 's/^/    /' | head -6
  [ "$r" = all-2 ] && { kill $smi 2>/dev/null; wait $smi 2>/dev/null; }
done
python3 - "$OUT/clocks-step.txt" <<'PY'
import sys, statistics
rows = [l.split(",") for l in open(sys.argv[1]) if "MHz" in l]
mhz = [float(r[0].split()[0]) for r in rows]; watts = [float(r[1].split()[0]) for r in rows if "W" in r[1]]
if mhz: print(f"during all-2: SM clock median {statistics.median(mhz):.0f} MHz (min {min(mhz):.0f}, max {max(mhz):.0f}), "
              f"power median {statistics.median(watts):.0f} W (max {max(watts):.0f}), {len(mhz)} samples")
PY
