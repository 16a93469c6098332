#!/usr/bin/env bash
# Issue 16 on the GPU machine: the tensor-core kernels' correctness tests (validation on), then every linear
# and attention shape of an SD 1.5 step timed by sdgen (bench/linear_bench, bench/attention_bench) and by
# cuBLAS / flash SDPA through PyTorch in the same call.
#   scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/bench/linear_bench \
#       build/default/bench/attention_bench
#   run: bash scripts/device/bench-tensor-core.sh [LINEAR_VARIANT...]      (carry .gl .carry)
# Then, here: python3 bench/report_tensor_core.py <files_at> docs/perf-data/h100-tensor-core.json (with the
# profile of scripts/device/check-sd15.sh copied beside them as profile_conv_sd15_fp16.json).
# Full outputs under $OUT: ops_tests.log, torch_linear.json, torch_sdpa.json, linear.json, attention.json, bench.log.
set -uo pipefail
source scripts/device/vulkan-env.sh
out=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader || true
SDGEN_VALIDATION=1 timeout 480 ./build/default/tests/ops/ops_tests \
  --gtest_filter="${SDGEN_TEST_FILTER:-*Coop*:*Linear*:*Attention*:*RawHalf*}" > "$out/ops_tests.log" 2>&1
grep -E "^\[  (PASSED|FAILED) |FAILED|\[vulkan validation\]" "$out/ops_tests.log" | head -30
python3 bench/reference/torch_linear.py bench/data/sd15_linear_shapes.json "$out/torch_linear.json" \
  > "$out/torch_linear.log" 2>&1 || tail -5 "$out/torch_linear.log"
python3 bench/reference/torch_sdpa.py bench/data/sd15_attention_shapes.json "$out/torch_sdpa.json" \
  > "$out/torch_sdpa.log" 2>&1 || tail -5 "$out/torch_sdpa.log"
variants=("$@")
[ ${#variants[@]} -eq 0 ] && variants=(auto tiled)
./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds "${ROUNDS:-10}" \
  --json "$out/linear.json" "${variants[@]}" > "$out/bench.log" 2>&1
# Attention: the fp32 kernel and the tensor-core kernel (the engine's choice for fp16) per shape.
python3 - "$out" <<'PY' >> "$out/bench.log" 2>&1
import json, subprocess, sys
out = sys.argv[1]
rows = []
for s in json.load(open("bench/data/sd15_attention_shapes.json"))["attention"]:
    f = f"{out}/att_one.json"
    cmd = ["./build/default/bench/attention_bench", str(s["BH"]), str(s["Lq"]), str(s["Lk"]), str(s["D"]), "10",
           "fp32", "coop", "--json", f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(s["name"], r.stdout.strip(), r.stderr.strip()[-300:], flush=True)
    if r.returncode == 0:
        for row in json.load(open(f)):
            row.update({"name": s["name"], "per_step": s["per_step"], "ms": row["median_ms"],
                        "kernel": row["tile"], "variant": "auto" if row["variant"] == "coop" else row["variant"]})
            rows.append(row)
json.dump({"rows": rows}, open(f"{out}/attention.json", "w"), indent=1)
PY
grep -vE "^ " "$out/bench.log" | cut -c1-160
cat "$out/torch_linear.log" "$out/torch_sdpa.log"
rm -f "$out/att_one.json" "$out/torch_linear.log" "$out/torch_sdpa.log"  # printed above; 8 files come back (the device returns at most 9)
