#!/usr/bin/env bash
# Session 21, call E (issue 19), carry .gl .carry .whl, after `scripts/device/pack.sh build/default/app/sdgen
# build/default/tests/ops/ops_tests` and `slim-tree.sh on`, with the previous GEMM kernel in the tree as
# scripts/device/sessions/s21-e-old-gemm_coop.slang (`git show 8562666:shaders/linear/gemm_coop.slang >` that file,
# untracked): the coop GEMM's epilogue synchronized per subgroup instead of per workgroup after its first
# barrier. The coop tests with validation, then `sdgen --profile-conv` of SD 1.5 fp16 with each shader folder,
# twice, alternating (docs/perf.md, session 21).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
rm -rf /tmp/sh-old && cp -r shaders /tmp/sh-old && cp scripts/device/sessions/s21-e-old-gemm_coop.slang /tmp/sh-old/linear/gemm_coop.slang
F='*Coop*:GemmSplitK.*:*MatmulWithHalfB*:LinearTest.*:*Geglu*:*GroupNormRows*'
SDGEN_VALIDATION=1 ./build/default/tests/ops/ops_tests --gtest_filter="$F" > "$OUT/ops.log" 2>&1
echo "ops_tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/ops.log" | tr '\n' ' ')"
grep -E "FAILED  \]" "$OUT/ops.log" | head -5
grep -m3 -o "\[vulkan validation\].\{0,300\}" "$OUT/ops.log"
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > "$OUT/make.log" 2>&1 || tail -5 "$OUT/make.log"
rm -f "$OUT/make.log"
m=/tmp/sd15/sd15-random
./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 > /dev/null 2>&1; echo "tune rc=$?"
for round in 1 2; do
  for v in old new; do
    dir=$PWD/shaders; [ $v = old ] && dir=/tmp/sh-old
    SDGEN_SHADER_DIR=$dir ./build/default/app/sdgen --profile-conv -m $m -W 512 -H 512 --precision fp16 \
      --json "$OUT/profile-$v-$round.json" > /dev/null 2>&1
    echo "gemm $v, round $round rc=$?: $(python3 -c "
import json; d=json.load(open('$OUT/profile-$v-$round.json'))
print(' | '.join(g['name'].split()[0] + ' %.3f (conv %.3f linear %.3f)' % (g['total_ms'], g['by_type']['conv']['ms'], g['by_type']['linear']['ms']) for g in d['graphs']))")"
  done
done
