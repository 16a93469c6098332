#!/usr/bin/env bash
# Session 33, call D (issue 22; carry .gl .carry .whl, the bundle of call B: sdgen travels with every pack). Where
# SDXL's fp16 1024^2 step goes with the wave-balanced split-K rule (and where without: SDGEN_WAVE_SPLIT=0), and
# what the conv autotune chose per layer (the split-3 candidate included): `sdgen --profile-conv`.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 200 python3 tests/reference/make_sdxl_random.py /tmp/sdxl/models /tmp/sdxl/refs > "$OUT/make.log" 2>&1; echo "make rc=$?"
for r in on off; do
  v=1; [ $r = off ] && v=0
  SDGEN_WAVE_SPLIT=$v timeout 150 ./build/default/app/sdgen --profile-conv -m /tmp/sdxl/models/sdxl-random -W 1024 -H 1024 \
    --precision fp16 --json "$OUT/profile-sdxl-$r.json" > "$OUT/profile-sdxl-$r.txt" 2>&1; echo "profile $r rc=$?"
done
rm -f "$OUT/make.log"
python3 - "$OUT" <<'PY'
import json, sys, collections
out = sys.argv[1]
for r in ("on", "off"):
    d = json.load(open(f"{out}/profile-sdxl-{r}.json"))
    for g in d["graphs"]:
        print(r, g["name"], round(g["total_ms"], 3), g["launches"], {k: round(v["ms"], 3) for k, v in g["by_type"].items()})
d = json.load(open(f"{out}/profile-sdxl-on.json"))
unet = [g for g in d["graphs"] if "unet" in g["name"].lower()][0]
convs = collections.defaultdict(lambda: [0, 0.0, 0.0, ""])
for c in unet["convs"]:
    e = convs[c["problem"]]; e[0] += 1; e[1] += c["ms"]; e[2] = c.get("tflops", 0); e[3] = c.get("candidate", "")
print("UNet convs by problem (count, ms, TFLOP/s of the last, candidate):")
for p, e in sorted(convs.items(), key=lambda x: -x[1][1])[:16]: print(f"  {e[0]:3d} {e[1]:7.3f} {e[2]:6.1f}  {e[3]:28s} {p}")
others = collections.defaultdict(lambda: [0, 0.0])
for o in unet["others"]:
    key = o.get("label", o.get("layer", "?"))
    key = " ".join(w for w in key.split() if not w.isdigit())
    others[key][0] += 1; others[key][1] += o["ms"]
print("UNet other launches by label (count, ms):")
for k, e in sorted(others.items(), key=lambda x: -x[1][1])[:25]: print(f"  {e[0]:4d} {e[1]:7.3f}  {k[:90]}")
PY
