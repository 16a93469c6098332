#!/usr/bin/env bash
# Session 35, call E (issue 17 refresh; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`): no conv change since
# session 27's table; the fp16 table beside cuDNN (best algorithm per row) and SD 1.5's profile twice with one
# tuning cache (the first tunes, the second must tune nothing).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1
OUT=$OUT bash scripts/device/bench-conv2d.sh > /dev/null 2>&1; echo "bench rc=$?"
grep -E "geometric mean" "$OUT/bench_conv2d_fp16.txt"; rm -f "$OUT/bench_conv2d_fp32.txt" "$OUT/bench_conv2d_fp32.json"
python3 - "$OUT/bench_conv2d_fp16.txt" <<'PY'
import sys
rows = {}
for l in open(sys.argv[1]):
    p = l.split()
    if len(p) > 15 and p[2] == "fp16" and "skipped" not in l:
        try: r = float(p[15])
        except ValueError: continue
        k = (p[0], p[1])
        if k not in rows or r < rows[k][0]: rows[k] = (r, p[3], p[4], p[14])
print("rows over 2x:", [(k[0], v) for k, v in rows.items() if v[0] > 2.0])
PY
source scripts/device/vulkan-env.sh >/dev/null 2>&1
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
export SDGEN_CACHE_DIR=/tmp/cache17
for r in 1 2; do
  timeout 150 ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
    --json "$OUT/profile-$r.json" > "$OUT/profile-$r.txt" 2>&1; echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
for r in (1, 2):
    d = json.load(open(f"{sys.argv[1]}/profile-{r}.json"))
    print(r, "autotune", {k: d["autotune"][k] for k in ("problems_tuned", "problems_from_cache", "launches", "seconds")})
    for g in d["graphs"]:
        print("  ", g["name"], round(g["total_ms"], 3), {k: round(x["ms"], 3) for k, x in g["by_type"].items()})
PY
rm -f "$OUT/profile-1.txt" "$OUT/profile-2.txt"
