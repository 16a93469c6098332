#!/usr/bin/env bash
# Session 42, call C (issue 17; carry .gl .carry .whl after `scripts/device/pack.sh build/default/tests/ops/ops_tests
# build/default/app/libsdgen_cudnn_reference.so` and `scripts/device/slim-tree.sh on`).
# Winograd F(2,3) on the fp16-accumulator tiles ("coop-winograd 256x256" / "256x128", autotune candidates from
# 16384 rows, SDGEN_CONV_HALF_WINOGRAD=0 leaves them out) for the VAE's large 3x3 convs: 4/9 of the implicit GEMM's
# MMAs, K = Cin in one fp16 sum. Tests with validation, then the fp16 conv table's tuned rows (fresh tuning cache,
# cuDNN in the same process), the three rows over 2x again with the knob off, and every candidate's tuning time
# on the VAE's problems from the cache.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
T=./build/default/tests/ops/ops_tests
SDGEN_VALIDATION=1 timeout 150 $T --gtest_filter='Conv/ConvTest.CoopWinograd*:Conv/ConvTest.CoopHalfTileSplit*:ConvTuneTest.*' \
  > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|Expected|Which is|VUID|max \|gpu" "$OUT/tests.log" | head -14 | cut -c1-200
S=./build/default/app/sdgen
rm -rf /tmp/c42c; SDGEN_CACHE_DIR=/tmp/c42c timeout 300 $S --bench-conv2d --precision fp16 --algo tuned --reference cudnn \
  --json "$OUT/bench-tuned-fp16.json" > "$OUT/bench-tuned-fp16.txt" 2>&1
echo "table rc=$?"
row() { awk '$4 == "tuned" {t = ""; for (i = 17; i <= NF; ++i) t = t " " $i; printf "%-18s %8s ms %7s TF/s rel %s cuDNN %s ratio %s |%s\n", $1, $5, $11, $13, $15, $16, t}'; }
row < "$OUT/bench-tuned-fp16.txt"
python3 - "$OUT/bench-tuned-fp16.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["rows"] if r.get("ratio_vs_cudnn")]
print("geomean", round(math.exp(sum(math.log(r["ratio_vs_cudnn"]) for r in rows) / len(rows)), 3), "over", len(rows),
      "| over 2x:", [(r["layer"], round(r["ratio_vs_cudnn"], 2)) for r in rows if r["ratio_vs_cudnn"] > 2])
PY
cp /tmp/c42c/conv-tune-v1.json "$OUT/" 2>/dev/null
python3 - /tmp/c42c/conv-tune-v1.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ents = d.get("entries", d)
for e in (ents if isinstance(ents, list) else [dict(v, problem=k) for k, v in ents.items()]):
    ms = e.get("ms", {})
    if any(k.startswith("coop-winograd") for k in ms):
        best = sorted(ms.items(), key=lambda kv: kv[1])[:5]
        print(str(e.get("problem", e.get("key", "")))[:60], "|", ", ".join(f"{k} {v:.4f}" for k, v in best))
PY
echo "== the rows over 2x with SDGEN_CONV_HALF_WINOGRAD=0 (same process order, fresh cache)"
for s in 1,512,512,256,256,3,1 1,512,256,256,256,3,1 1,256,256,512,512,3,1; do
  rm -rf /tmp/c42c0; SDGEN_CONV_HALF_WINOGRAD=0 SDGEN_CACHE_DIR=/tmp/c42c0 timeout 100 $S --bench-conv2d --precision fp16 \
    --algo tuned --reference cudnn --shape $s 2>&1 | row
  rm -rf /tmp/c42c1; SDGEN_CACHE_DIR=/tmp/c42c1 timeout 100 $S --bench-conv2d --precision fp16 \
    --algo tuned --reference cudnn --shape $s 2>&1 | row
done
