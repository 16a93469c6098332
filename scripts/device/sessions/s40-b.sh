#!/usr/bin/env bash
# Session 40, call B (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`).
# Usage: s40-b.sh [VARIANT...], VARIANT = NAME or NAME:VAR=VALUE[,VAR=VALUE...]. Default variants:
#   off;
#   sumnorm (SDGEN_SPLIT_SUM_NORM=1) and sumnorm2 (=2): the transformer blocks' layer norms written by the split-K
#     sums before them, a subgroup or a workgroup per row;
#   tail (SDGEN_ATTENTION_TAIL_SPLIT=1): the self-attentions' last wave split over their keys;
#   wide (SDGEN_CONV_HALF_256x128=1, SDGEN_CONV_HALF_256x160=1, SDGEN_WIDE_HALF_TILE=128): the wide
#     fp16-accumulator conv candidates and linear tile (pick the linear width from s40-a's bench);
#   fixed (SDGEN_GEMM_FIXED_SHAPE=1).
# SDXL's fp16 1024^2 UNet step for each, one process each with its own fresh tuning cache, in the order given and
# a second round while the call's time allows, beside diffusers' eager and CUDA-graph step in the same call
# (make_sdxl_random.py), with parity against torch fp32; then --profile-conv of the variants named in PROFILE
# (default "off sumnorm wide"): where the step's time goes, and the conv layers whose candidate changes.
set -uo pipefail
V=("$@"); [ ${#V[@]} -eq 0 ] && V=(off sumnorm:SDGEN_SPLIT_SUM_NORM=1 sumnorm2:SDGEN_SPLIT_SUM_NORM=2
  tail:SDGEN_ATTENTION_TAIL_SPLIT=1 wide:SDGEN_CONV_HALF_256x128=1,SDGEN_CONV_HALF_256x160=1,SDGEN_WIDE_HALF_TILE=128
  fixed:SDGEN_GEMM_FIXED_SHAPE=1)
PROFILE=${PROFILE:-"off sumnorm wide"}  # the variants profiled at the end, by name
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
w=/tmp/sdxl; mkdir -p "$w"
timeout 200 python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
grep -E "torch UNet step|CUDA graph|eager" "$OUT/make.log" | tail -4
knobsOf() { local spec=$1; [[ $spec == *:* ]] && tr ',' '\n' <<< "${spec#*:}"; }
for round in 1 2; do
  for v in "${V[@]}"; do
    name=${v%%:*}; mapfile -t knobs < <(knobsOf "$v")
    # the call's 10 minutes: the second round and the profiles only where they still fit
    [ $SECONDS -gt 420 ] && { echo "skipped $name-$round (${SECONDS} s)"; continue; }
    rm -rf /tmp/sdxl-cache-$name-$round
    env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/sdxl-cache-$name-$round timeout 150 ./build/default/tests/model_check/sdgen_model_check \
      --refs "$w/refs/sdxl_random" --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "/tmp/check-$name-$round.txt" 2>&1
    echo "$name-$round rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "/tmp/check-$name-$round.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
    [ $round = 1 ] && grep -E "rel err" "/tmp/check-$name-$round.txt" | tr -s ' ' | sed 's/^/    /' | head -6
  done
done
# Profiles of the variants named in PROFILE where the call's time allows: where the step's time goes, and the conv
# layers whose candidate changes against the first profiled.
profiled=()
for v in "${V[@]}"; do
  name=${v%%:*}; mapfile -t knobs < <(knobsOf "$v")
  [[ " $PROFILE " == *" $name "* ]] || continue
  [ $SECONDS -gt 500 ] && { echo "skipped profile $name (${SECONDS} s)"; continue; }
  env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/sdxl-cache-$name-1 timeout 100 ./build/default/app/sdgen --profile-conv \
    -m "$w/models/sdxl-random" -W 1024 -H 1024 --precision fp16 --json "/tmp/profile-$name.json" > /tmp/profile-$name.txt 2>&1
  echo "profile $name rc=$?"; [ -f "/tmp/profile-$name.json" ] && profiled+=("/tmp/profile-$name.json")
done
[ ${#profiled[@]} -gt 0 ] && python3 - "${profiled[@]}" <<'PY'
import json, sys
runs = [(f.split("profile-")[1][:-5], json.load(open(f))["graphs"][0]) for f in sys.argv[1:]]
for name, g in runs:
    print(f"{name:8s} unet step {g['total_ms']:.3f} ms, {g['launches']} launches |",
          " ".join(f"{k} {v['ms']:.2f} ({v['launches']})" for k, v in g["by_type"].items()))
base = {c["layer"]: c for c in runs[0][1].get("convs", [])}
for name, g in runs[1:]:
    for c in g.get("convs", []):
        b = base.get(c["layer"])
        if b and b["candidate"] != c["candidate"]:
            print(f"  {name}: {c['layer']:30s} {b['candidate']:24s} {b['ms']:.4f} -> {c['candidate']:24s} {c['ms']:.4f}")
PY
for f in "${profiled[@]}"; do cp "$f" "$OUT/sdxl-$(basename "$f")"; done
for f in /tmp/check-*-[12].txt; do echo "== $f"; cat "$f"; done > "$OUT/checks.txt" 2>/dev/null
