#!/usr/bin/env bash
# Session 40, call B (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Usage: s40-b.sh [VARIANT...],
# VARIANT = NAME or NAME:VAR=VALUE[,VAR=VALUE...] (default: off, fixed:SDGEN_GEMM_FIXED_SHAPE=1,
# wide:SDGEN_CONV_HALF_256x128=1,SDGEN_CONV_HALF_256x160=1,SDGEN_WIDE_HALF_TILE=128: session 40's wide fp16-accumulator
# conv candidates and linear tile; pick the linear width from s40-a's bench), each run twice in the order given, one process each
# with its own fresh tuning cache. SDXL's fp16 1024^2 UNet step beside diffusers' eager and CUDA-graph step in the
# same call (make_sdxl_random.py), parity against torch fp32 for each; the conv layers whose candidate changes
# (--profile-conv of the first and last variant).
set -uo pipefail
V=("$@"); [ ${#V[@]} -eq 0 ] && V=(off fixed:SDGEN_GEMM_FIXED_SHAPE=1
  wide:SDGEN_CONV_HALF_256x128=1,SDGEN_CONV_HALF_256x160=1,SDGEN_WIDE_HALF_TILE=128)
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
      --refs "$w/refs/sdxl_random" --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-$name-$round.txt" 2>&1
    echo "$name-$round rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-$name-$round.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
    [ $round = 1 ] && grep -E "rel err" "$OUT/check-$name-$round.txt" | tr -s ' ' | sed 's/^/    /' | head -6
  done
done
first=${V[0]}; last=${V[${#V[@]}-1]}
for v in "$first" "$last"; do
  name=${v%%:*}; mapfile -t knobs < <(knobsOf "$v")
  [ $SECONDS -gt 500 ] && { echo "skipped profile $name (${SECONDS} s)"; continue; }
  env "${knobs[@]}" SDGEN_CACHE_DIR=/tmp/sdxl-cache-$name-2 timeout 150 ./build/default/app/sdgen --profile-conv \
    -m "$w/models/sdxl-random" -W 1024 -H 1024 --precision fp16 --json "/tmp/profile-$name.json" > /tmp/profile-$name.txt 2>&1
  echo "profile $name rc=$?"
done
[ -f "/tmp/profile-${last%%:*}.json" ] && python3 - "/tmp/profile-${first%%:*}.json" "/tmp/profile-${last%%:*}.json" <<'PY'
import json, sys
a, b = [json.load(open(f))["graphs"][0] for f in sys.argv[1:3]]
print("unet step", round(a["total_ms"], 3), "->", round(b["total_ms"], 3),
      {k: (round(a["by_type"][k]["ms"], 2), round(b["by_type"][k]["ms"], 2)) for k in a["by_type"]})
cb = {c["layer"]: c for c in b.get("convs", [])}
for c in a.get("convs", []):
    d = cb.get(c["layer"])
    if d and d["candidate"] != c["candidate"]:
        print(f"  {c['layer']:32s} {c['problem'][:30]:30s} {c['candidate']:24s} {c['ms']:.4f} -> {d['candidate']:24s} {d['ms']:.4f}")
PY
cp "/tmp/profile-${last%%:*}.json" "$OUT/profile-sdxl-${last%%:*}.json" 2>/dev/null
