#!/usr/bin/env bash
# Session 39, call A (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`). (1) Two opt-in conv candidate
# families, the 256x256 fp16-accumulator tile over several waves (SDGEN_CONV_HALF_WAVES=1) and the 128x128 tile with
# fp16 accumulators (SDGEN_CONV_HALF_128=1; distinct names, so the profile attributes each layer): their tests with validation,
# then SD 1.5's fp16 profile off / on / off / on, each with a fresh tuning cache (one process each: the tuner's
# choices, the VAE decode's conv against the bar, <= 10 ms, and the tuning time). (2) Session 38's defaults with no
# knobs: the fp16 conv table beside cuDNN (as s37-e.sh, in what remains of the call; replaces
# docs/perf-data/h200-bench-conv2d-fp16.json).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
SDGEN_VALIDATION=1 timeout 120 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopHalfTileSplit*:*HalfTileSplitCandidate*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|Expected|Which is|VUID|max relative" "$OUT/tests.log" | head -12 | cut -c1-220
rm -rf /tmp/e2e
timeout 120 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
for r in off-1 on-1 off-2 on-2; do
  h=1; [ "${r%-*}" = off ] && h=0
  rm -rf "/tmp/cache39-$r"
  SDGEN_CONV_HALF_WAVES=$h SDGEN_CONV_HALF_128=$h SDGEN_CACHE_DIR="/tmp/cache39-$r" timeout 120 ./build/default/app/sdgen --profile-conv \
    -m /tmp/e2e/sd15-random -W 512 -H 512 --precision fp16 --json "$OUT/profile-sd15-$r.json" > /tmp/profile-$r.txt 2>&1
  echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
runs = {}
for r in ("off-1", "on-1", "off-2", "on-2"):
    d = json.load(open(f"{sys.argv[1]}/profile-sd15-{r}.json"))
    a = d["autotune"]
    print(r, f"tuned {a['problems_tuned']} in {a['seconds']:.2f} s ({a['launches']} launches) |",
          " | ".join(f"{g['name']} {g['total_ms']:.3f} conv {g['by_type']['conv']['ms']:.3f}" for g in d["graphs"][:3]))
    runs[r] = {(g["name"], c["layer"]): c for g in d["graphs"] for c in g["convs"]}
print("layers where 'on' chose another candidate (off-1 / on-1 / off-2 / on-2 ms):")
for key, c in runs["off-1"].items():
    if runs["on-1"][key]["candidate"] != c["candidate"] or runs["on-2"][key]["candidate"] != runs["off-2"][key]["candidate"]:
        print(f"  {key[0]}: {key[1]:34s} " + " ".join(f"{runs[r][key]['ms']:.4f} {runs[r][key]['candidate']:22s}" for r in runs))
PY
rm -f "$OUT"/profile-sd15-off-2.json "$OUT"/profile-sd15-on-2.json
SDGEN_CONV_HALF_WAVES=1 SDGEN_CONV_HALF_128=1 SDGEN_CACHE_DIR=/tmp/cache39-on-2 timeout 100 ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 > /tmp/sd15-check-on.txt 2>&1
echo "sd15 check (on) rc=$?"; grep -E "rel err" /tmp/sd15-check-on.txt | tr -s ' ' | sed 's/^/    /'
source scripts/device/cuda-env.sh >/dev/null 2>&1
timeout 330 ./build/default/app/sdgen --bench-conv2d --precision fp16 --reference cudnn \
  --json "$OUT/bench_conv2d_fp16.json" > "$OUT/bench_conv2d_fp16.txt" 2>&1
echo "bench rc=$?"
grep -E "geometric mean" "$OUT/bench_conv2d_fp16.txt"
python3 - "$OUT/bench_conv2d_fp16.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
best = {}
for r in d["rows"]:
    if r.get("error"): continue
    k = r["layer"]
    if k not in best or r["ratio_vs_cudnn"] < best[k]["ratio_vs_cudnn"]: best[k] = r
print("geomean (best per row):", d.get("geomean_ratio_vs_cudnn_best"))
print("rows over 2x:", [(k, round(r["ratio_vs_cudnn"], 2), r["algo"], round(r["median_ms"], 4)) for k, r in best.items() if r["ratio_vs_cudnn"] > 2])
print("conv_out rows:", [(k, round(r["median_ms"], 4), r["algo"], round(r["ratio_vs_cudnn"], 2)) for k, r in best.items() if "conv_out" in k])
PY
