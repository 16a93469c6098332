#!/usr/bin/env bash
# Session 22, call B (issues 17, 19), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`:
# the upsamplers' 3x3 convolutions of a nearest 2x upsampling computed per output phase (four 2x2 convolutions of
# the input: 16 products per output and channel pair instead of 36; ops/conv2d_coop_upsample.cpp). Its tests
# with validation, sdgen_model_check fp16 (UNet and VAE against torch), then `sdgen --profile-conv` of SD 1.5
# fp16 with SDGEN_CONV_UPSAMPLE_PHASES=0 (the upsampling staged, 3x3 taps) and 1, twice, alternating.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
F='*Upsample*:*Coop*:GemmSplitK.*:GemmCoopRule.*'
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter="$F" > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops.log" | tr '\n' ' ')"
grep -E "FAILED  \]|upsampled" "$OUT/ops.log" | head -8
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
SDGEN_VALIDATION=1 ./build/default/tests/graph_tests --gtest_filter='*SubPixel*' > "$OUT/graph.log" 2>&1
echo "graph_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/graph.log" | tr '\n' ' ')"
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/tests/model_check/sdgen_model_check --refs /tmp/sd15/refs/sd15_random --model $m --precision fp16 \
  > "$OUT/model-check.log" 2>&1; echo "model check rc=$?"; grep -i -E "vae|unet|fail|pass" "$OUT/model-check.log" | head -12
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > /dev/null 2>&1; echo "tune rc=$?"
for round in 1 2; do
  for v in 0 1; do
    SDGEN_CONV_UPSAMPLE_PHASES=$v ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 \
      --json "$OUT/profile-phases$v-$round.json" > /dev/null 2>&1
    echo "phases $v round $round rc=$?: $(python3 -c "
import json; d=json.load(open('$OUT/profile-phases$v-$round.json'))
for g in d['graphs'][:2]:
    up = [(c['layer'].split()[-2] + ' %.4f' % c['ms']) for c in g['convs'] if 'upsample' in c['layer']]
    print(g['name'].split()[0] + ' %.3f (conv %.3f) %d launches' % (g['total_ms'], g['by_type']['conv']['ms'], g['launches']), up, end=' | ')")"
  done
done
