#!/usr/bin/env bash
# Session 38 (no device: prepared for the next session), call A (issues 17 and 22; carry .gl .carry .whl after
# `scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/app/sdgen
# build/default/app/libsdgen_cudnn_reference.so build/default/tests/model_check/sdgen_model_check` and
# `scripts/device/slim-tree.sh on`). Winograd F(2,3) fused on tensor cores (coop-winograd's fused form,
# shaders/conv/conv_winograd_coop.slang, SDGEN_COOP_WINOGRAD_FUSED=1), built without a device: its float64 tests with
# validation first (a failure ends the call), its registers and shared memory, the VAE's and SDXL's 3x3 rows with
# the implicit GEMM (coop, the rule's tile) and both fused forms with fp32 and fp16 accumulators (cuDNN in each run),
# then SD 1.5's profile with the fused candidates (all four) in the autotune off / on and its parity.
set -uo pipefail
source scripts/device/vulkan-env.sh >/dev/null 2>&1; source scripts/device/cuda-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopWinograd*:ConvWinogradFused.*' > "$OUT/tests.log" 2>&1
rc=$?
echo "ops tests rc=$rc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|FAILED|got|VUID|max relative" "$OUT/tests.log" | head -16 | cut -c1-220
[ $rc -eq 0 ] || exit 1
S=./build/default/app/sdgen
# VAE (SD 1.5 decode at 512^2: 512 ch at 128^2, 256 at 256^2, 128 at 512^2; the table's 2x rows 512 at 256^2 and
# 256 at 512^2) and SDXL's UNet (320 at 128^2, 1280 at 32^2, batch 2): coop (the rule's tile), the fused forms with
# fp32 and fp16 accumulators, cuDNN in each run. (The unfused form lost 1.6-2x to coop in session 11.) The first
# shape's runs print each pipeline's registers and shared memory (SDGEN_PIPELINE_STATS).
stats=1
for sh in 1,512,512,128,128,3,1 1,256,256,256,256,3,1 1,128,128,512,512,3,1 1,512,512,256,256,3,1 \
  1,256,256,512,512,3,1 2,320,320,128,128,3,1 2,1280,1280,32,32,3,1; do
  for r in coop fused fused64 fusedh fused64h; do
    a=coop-winograd f=1 h=0
    case $r in coop) a=coop ;; fused64) f=64 ;; fusedh) h=1 ;; fused64h) f=64; h=1 ;; esac
    SDGEN_PIPELINE_STATS=$stats SDGEN_COOP_WINOGRAD_FUSED=$f SDGEN_COOP_WINOGRAD_HALF_ACC=$h timeout 60 $S \
      --bench-conv2d --precision fp16 --reference cudnn --shape $sh --algo $a > "$OUT/bench-${sh//,/_}-$r.txt" 2>&1
    echo "$sh $r rc=$?: $(grep -E "fp16" "$OUT/bench-${sh//,/_}-$r.txt" | grep -vE "^#" | tail -1 | tr -s ' ' | cut -c1-200)"
    [ "$stats" = 1 ] && grep -E "pipeline stats" "$OUT/bench-${sh//,/_}-$r.txt" | grep -E "fused|coop [0-9]" | head -3 |
      cut -c1-220
  done
  stats=0
done
# SD 1.5's fp16 profile with fresh tuning caches, the fused candidates off / on / off / on (one process each: the
# tuner's choices, the VAE decode's and the UNet step's conv time), then its parity with the "on" cache.
source scripts/device/python-env.sh >/dev/null 2>&1
rm -rf /tmp/e2e
timeout 120 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || tail -5 /tmp/make15.log
for r in off-1 on-1 off-2 on-2; do
  f=1; [ "${r%-*}" = off ] && f=0
  rm -rf "/tmp/cache38-$r"
  SDGEN_COOP_WINOGRAD_FUSED=$f SDGEN_COOP_WINOGRAD_HALF_ACC=$f SDGEN_CACHE_DIR="/tmp/cache38-$r" timeout 120 \
    $S --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/profile-sd15-$r.json" > "$OUT/profile-sd15-$r.txt" 2>&1
  echo "profile $r rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
for r in ("off-1", "on-1", "off-2", "on-2"):
    try:
        d = json.load(open(f"{sys.argv[1]}/profile-sd15-{r}.json"))
    except (OSError, ValueError) as e:
        print(r, "missing", e); continue
    a = d["autotune"]
    print(r, f"tuned {a['problems_tuned']} in {a['seconds']:.2f} s ({a['launches']} launches) |",
          " | ".join(f"{g['name']} {g['total_ms']:.3f} conv {g['by_type']['conv']['ms']:.3f}" for g in d["graphs"][:2]))
    for g in d["graphs"]:
        for c in g["convs"]:
            if "fused" in c.get("candidate", ""):
                print(f"    {g['name']}: {c['layer']} {c['ms']:.4f} {c['candidate']}")
PY
rm -f "$OUT"/profile-sd15-*.txt
SDGEN_COOP_WINOGRAD_FUSED=1 SDGEN_COOP_WINOGRAD_HALF_ACC=1 SDGEN_CACHE_DIR=/tmp/cache38-on-2 timeout 100 \
  ./build/default/tests/model_check/sdgen_model_check \
  --refs /tmp/e2e/refs/sd15_random --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/sd15-check-on.txt" 2>&1
echo "sd15 check (on) rc=$?"; grep -E "rel err" "$OUT/sd15-check-on.txt" | tr -s ' ' | sed 's/^/    /'
