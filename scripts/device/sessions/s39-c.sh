#!/usr/bin/env bash
# Session 39, call C (issues 17, 22; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`). Usage: s39-c.sh [KNOBS...]
# (environment assignments, e.g. the winners of calls A-B before they become defaults). Issue 17's profile results
# file: SD 1.5's fp16 `--profile-conv` with a fresh tuning cache, then again from that cache (0 tuning launches;
# docs/perf-data/h200-profile-conv-sd15-fp16.json), twice more with fresh caches (the decode's conv against <= 10 ms);
# then SDXL's fp16 1024^2 profile (where the step's GPU time goes, per op type and layer) and its UNet step beside
# diffusers' eager and CUDA-graph step in the same call (make_sdxl_random.py), with parity against torch fp32.
set -uo pipefail
for kv in "$@"; do export "$kv"; done
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
env | grep -E '^SDGEN_' | sort
rm -rf /tmp/e2e
timeout 120 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
for r in fresh-1 cached fresh-2 fresh-3; do
  [ "$r" = cached ] || rm -rf /tmp/cache39c
  SDGEN_CACHE_DIR=/tmp/cache39c timeout 120 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
    --precision fp16 --json "$OUT/profile-sd15-$r.json" > /tmp/profile-$r.txt 2>&1; echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
for r in ("fresh-1", "cached", "fresh-2", "fresh-3"):
    d = json.load(open(f"{sys.argv[1]}/profile-sd15-{r}.json"))
    a = d["autotune"]
    print(r, f"tuned {a['problems_tuned']} in {a['seconds']:.2f} s ({a['launches']} launches), {a['problems_from_cache']} from cache |",
          " | ".join(f"{g['name']} {g['total_ms']:.3f} conv {g['by_type']['conv']['ms']:.3f}" for g in d["graphs"][:3]))
PY
rm -f "$OUT"/profile-sd15-fresh-2.json "$OUT"/profile-sd15-fresh-3.json
w=/tmp/sdxl; mkdir -p "$w"
timeout 200 python3 tests/reference/make_sdxl_random.py "$w/models" "$w/refs" > /tmp/makexl.log 2>&1 || tail -5 /tmp/makexl.log
SDGEN_CACHE_DIR=/tmp/sdxl-cache-c timeout 200 ./build/default/app/sdgen --profile-conv -m "$w/models/sdxl-random" -W 1024 -H 1024 \
  --precision fp16 --json "$OUT/profile-sdxl.json" > /tmp/profile-sdxl.txt 2>&1; echo "sdxl profile rc=$?"
python3 - "$OUT/profile-sdxl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["graphs"]:
    print(g["name"], f"{g['total_ms']:.3f}", {k: round(v["ms"], 2) for k, v in g["by_type"].items()})
PY
grep -E "torch UNet step|CUDA graph|eager" /tmp/makexl.log | tail -2
SDGEN_CACHE_DIR=/tmp/sdxl-cache-c timeout 150 ./build/default/tests/model_check/sdgen_model_check --refs "$w/refs/sdxl_random" \
  --model "$w/models/sdxl-random" --precision fp16 --repetitions 30 > "$OUT/check-sdxl.txt" 2>&1
echo "sdxl check rc=$?: $(grep -E 'fp16 +unet step( GPU|.*launches)' "$OUT/check-sdxl.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
grep -E "rel err" "$OUT/check-sdxl.txt" | tr -s ' ' | sed 's/^/    /' | head -6
cp /tmp/makexl.log "$OUT/make-sdxl.log"
