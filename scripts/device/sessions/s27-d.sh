#!/usr/bin/env bash
# Session 27, call D (carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Call C: two tunings
# with 5 timed repetitions chose differently for one problem (split 8 / split 4, 115 / 103 µs per layer in the
# step, 7 layers) and for up 3 resnet 0 conv1 (325 / 272 µs). The conv autotune now times 15 (median). Four
# tunings from empty caches, two at 5 (SDGEN_AUTOTUNE_REPS=5) and two at 15, alternating, each followed by its
# `sdgen --profile-conv`; the choices that differ; then issue 19's end-to-end bench (its own tuning, 15) (~8 min).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for v in r5a r15a r5b r15b; do
  reps=${v#r}; reps=${reps%?}
  SDGEN_AUTOTUNE_REPS=$reps SDGEN_CACHE_DIR=/tmp/cache-$v timeout 90 ./build/default/app/sdgen --profile-conv \
    -m /tmp/e2e/sd15-random -W 512 -H 512 --precision fp16 --json "/tmp/prof-$v.json" > /tmp/prof.txt 2>&1
  echo "$v rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'conv|total' | tr -s ' ' | tr '\n' ' ')"
  cp "/tmp/cache-$v/conv-tune-v1.json" "$OUT/tune-$v.json"
done
python3 - <<'PY' | tee "$OUT/choices.txt"
import json
def load(v):
    d = json.load(open(f"/tmp/prof-{v}.json"))
    print(v, "autotune", d["autotune"]["seconds"], "s,", d["autotune"]["launches"], "launches")
    return {(g["name"], c["layer"]): (c["ms"], c["candidate"]) for g in d["graphs"] for c in g["convs"]}
p = {v: load(v) for v in ["r5a", "r5b", "r15a", "r15b"]}
for a, b in [("r5a", "r5b"), ("r15a", "r15b")]:
    diff = [(k, p[a][k], p[b][k]) for k in p[a] if k in p[b] and p[a][k][1] != p[b][k][1]]
    print(f"{a} vs {b}: {len(diff)} layers chose differently")
    for k, x, y in diff: print(f"  {k[0]:12s} {k[1]:34s} {x[1]:24s} {x[0]*1000:7.1f}  {y[1]:24s} {y[0]*1000:7.1f}")
    for g in ["unet step", "vae decode"]:
        print(f"  {g} conv sum: {sum(x[0] for k, x in p[a].items() if k[0] == g):.3f} / {sum(x[0] for k, x in p[b].items() if k[0] == g):.3f} ms")
PY
python3 bench/profile_compare.py --graph unet --top 12 r5=/tmp/prof-r5a.json,/tmp/prof-r5b.json \
  r15=/tmp/prof-r15a.json,/tmp/prof-r15b.json > /tmp/compare.txt 2>&1; grep -E "^  (r5|r15) " /tmp/compare.txt
timeout 330 bash scripts/device/e2e.sh > /dev/null 2>&1; echo "e2e rc=$?"
tail -8 "$OUT/e2e.log"
