#!/usr/bin/env bash
# Session 34, call D (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh build/default/bench/attention_bench`
# and `scripts/device/slim-tree.sh on`). (1) What a split of the keys would buy SDXL's self-attentions: the engine's
# D-64 tile (cm2:32,1,8) on the 32^2 shape (BH 40 x 1024 rows: 320 workgroups for 264 slots), on BH 33 (264: one
# wave), and on the work of 2 and 3 key parts (BH 80 x 512 keys, BH 120 x 342); the 64^2 shape likewise.
# (2) SDXL's profile with the one-wave tile off (call C has it on), for the per-layer gains inside the step.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
B=./build/default/bench/attention_bench
for s in "40 1024 1024" "33 1024 1024" "20 1024 1024" "80 1024 512" "120 1024 342" "160 1024 256" \
         "20 4096 4096" "40 4096 2048" "60 4096 1366" "13 4096 4096"; do
  echo "== BH Lq Lk: $s"
  timeout 60 $B $s 64 20 cm2:32,1,8 cm2:64,1,8 2>&1 | grep -E "cm2" | cut -c1-140
done
w=/tmp/sdxl; mkdir -p "$w"; export SDGEN_CACHE_DIR=/tmp/sdxl-cache
python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
for r in off on; do
  v=1; [ $r = off ] && v=0
  SDGEN_WAVE_TILE=$v timeout 150 ./build/default/app/sdgen --profile-conv -m "$w/models/sdxl-random" -W 1024 -H 1024 \
    --precision fp16 --json "$OUT/profile-$r.json" > "$OUT/profile-$r.txt" 2>&1; echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys, collections
out = sys.argv[1]
g = {r: json.load(open(f"{out}/profile-{r}.json"))["graphs"][0] for r in ("off", "on")}
for r in g: print(r, round(g[r]["total_ms"], 3), g[r]["launches"], {k: round(v["ms"], 3) for k, v in g[r]["by_type"].items()})
def kinds(x):
    s = collections.defaultdict(float)
    for o in x["others"]:
        lab = o["label"]
        key = " ".join(w for w in lab.split() if not w.isdigit() and w not in ("down", "up", "mid", "block", "blocks", "attention", "transformer"))
        s[key] += o["ms"]
    return s
a, b = kinds(g["off"]), kinds(g["on"])
for k in sorted(a, key=lambda k: a[k] - b.get(k, 0), reverse=True)[:14]:
    print(f"  {a[k]:8.3f} -> {b.get(k, 0):8.3f}  {k[:90]}")
PY
