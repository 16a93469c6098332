#!/usr/bin/env bash
# Written in session 26 (no device time left to it) for the next session's first call. Carry .gl .carry .whl
# after `scripts/device/pack.sh build/default/tests/ops/ops_tests build/default/tests/model_check/sdgen_model_check`
# and `scripts/device/slim-tree.sh on`. Session 26's two norm kernels, both the new defaults on tensor-core devices
# and unmeasured: the group norm over pixel blocks (ops::groupNormTiles; predicted: the UNet step's norms 0.85 ->
# ~0.5 ms, the VAE's staging launches gone, the up blocks' 12 shortcut staging launches gone) and the layer norm with one subgroup per row (layerNormSubgroupRowsMain;
# predicted: the 64^2 level's 12 us -> ~6 us, the step -0.15 ms). Their tests with validation; sdgen --profile-conv
# of three variants alternating, two rounds, one autotune cache (the same conv choices): `base` (both previous
# kernels: SDGEN_GROUP_NORM=rows SDGEN_LAYER_NORM_ROWS=workgroup), `gn` (the group norm only), `both` (the
# default); sdgen_model_check fp16 on the default (~6 min). Call B (s27-b.sh): issue 19's end-to-end bench and
# issue 17's bench-conv2d.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 90 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*GroupNormOverPixelBlocks*:*GroupNormRows*:*LayerNormRows*' > "$OUT/tests.log" 2>&1
echo "ops tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/tests.log" | tail -1)"
grep -E "Failure|vulkan validation|max \|" "$OUT/tests.log" | head -8
python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for r in 1 2; do for v in base gn both; do
  case $v in base) e="SDGEN_GROUP_NORM=rows SDGEN_LAYER_NORM_ROWS=workgroup";; gn) e="SDGEN_LAYER_NORM_ROWS=workgroup";;
    both) e="";; esac
  env $e SDGEN_CACHE_DIR=/tmp/cache-norms timeout 90 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random \
    -W 512 -H 512 --precision fp16 --json "$OUT/prof-$v-r$r.json" > /tmp/prof.txt 2>&1
  echo "$v round $r rc=$?: $(grep -A6 'totals of unet' /tmp/prof.txt | grep -E 'conv|linear|atten|norm|total' | tr -s ' ' | tr '\n' ' ')"
done; done
variants="base=$OUT/prof-base-r1.json,$OUT/prof-base-r2.json gn=$OUT/prof-gn-r1.json,$OUT/prof-gn-r2.json"
variants="$variants both=$OUT/prof-both-r1.json,$OUT/prof-both-r2.json"
python3 bench/profile_compare.py --graph unet --top 20 $variants > "$OUT/compare.txt" 2>&1
grep -E "^  (base|gn|both)|^==" "$OUT/compare.txt" | head -16
python3 bench/profile_compare.py --graph vae --top 12 $variants > "$OUT/compare-vae.txt" 2>&1
rm -f "$OUT"/prof-*-r2.json "$OUT"/prof-gn-r1.json  # 8 files come back at most
timeout 100 ./build/default/tests/model_check/sdgen_model_check --refs /tmp/e2e/refs/sd15_random \
  --model /tmp/e2e/sd15-random --precision fp16 > "$OUT/model-check.txt" 2>&1
echo "model check rc=$?"; grep -E "rel err|within|median" "$OUT/model-check.txt" | head -12
