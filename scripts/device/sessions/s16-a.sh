#!/usr/bin/env bash
# Session 16, call A (issues 17, 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/ops/ops_tests build/default/tests/models/models_tests` and `slim-tree.sh on`: the VAE's
# wide-head attention as two tensor-core products (ops::matmulHalfB) and the 128x128 split-K conv candidates —
# their tests against float64 on the H100 with validation, then SD 1.5's --profile-conv (UNet step, VAE decode).
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1
export SDGEN_VALIDATION=1
./build/default/tests/ops/ops_tests --gtest_filter='*MatmulWithHalfB*:*CoopBigTileSplitK*:*CoopWhereSupported*:*CoopMatrixKernelWhereSupported*:ConvTuneTest.*:*BatchedMatmul*' \
  > "$OUT/ops_tests.log" 2>&1; echo "ops_tests rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|max \|" "$OUT/ops_tests.log" | head -20
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops_tests.log"
./build/default/tests/models/models_tests --gtest_filter='AttentionLayer.*' > "$OUT/models_tests.log" 2>&1; echo "models_tests rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" "$OUT/models_tests.log" | head -10
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/models_tests.log"
unset SDGEN_VALIDATION
bash scripts/device/profile-sd15.sh
python3 - "$OUT/profile_conv_sd15_fp16.json" <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
for g in d["graphs"]:
    print("==", g["name"], round(g["total_ms"], 3), g["launches"], {k: round(v["ms"], 3) for k, v in g["by_type"].items()})
    if g["name"] == "vae decode":
        for x in g.get("others", []):
            if "attention" in x["label"]: print("  ", x["label"], round(x["ms"], 4))
        agg = collections.defaultdict(lambda: [0, 0.0, set()])
        for c in g["convs"]:
            a = agg[c["problem"]]; a[0] += 1; a[1] += c["ms"]; a[2].add(c["candidate"])
        for k, v in sorted(agg.items(), key=lambda kv: -kv[1][1]): print(f"  {v[1]:7.3f} {v[0]:3d} {k} {sorted(v[2])}")
PY
