#!/usr/bin/env bash
# Session 56, call D (carry .gl .carry .whl after `scripts/device/pack.sh` and `scripts/device/slim-tree.sh on`):
# whether the H100's tuning drops any candidate (ConvTuner::droppedCandidates, new: a candidate the timer could
# not record or compile is named): SD 1.5's --profile-conv (random weights, fp16, 512^2, fresh tuning) and the
# tuned bench rows of the 128- and 256-channel convs at 512^2.
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SECONDS=0
timeout 170 python3 tests/reference/make_sd15_random.py /tmp/e2e /tmp/e2e/refs > /tmp/make15.log 2>&1 || { echo "make_sd15_random failed"; tail -5 /tmp/make15.log; }
echo "model at $SECONDS s"
rm -rf /tmp/c56d
SDGEN_CACHE_DIR=/tmp/c56d timeout 120 ./build/default/app/sdgen --profile-conv -m /tmp/e2e/sd15-random -W 512 -H 512 \
  --precision fp16 --json "$OUT/profile.json" > "$OUT/profile.txt" 2>&1
echo "== profile rc=$? at $SECONDS s"
python3 -c "
import json
d = json.load(open('$OUT/profile.json'))
a = d['autotune']
print('tuned', a['problems_tuned'], 'seconds', round(a['seconds'], 2), 'dropped', a['candidates_dropped'])
for x in a['dropped']: print('  ', x)
for g in d['graphs']: print('  ', g['name'], round(g['total_ms'], 3), {k: round(x['ms'], 3) for k, x in g['by_type'].items()})"
for shape in 1,128,128,512,512,3,1 1,256,256,512,512,3,1 1,512,512,64,64,3,1; do
  rm -rf /tmp/c56d
  SDGEN_CACHE_DIR=/tmp/c56d timeout 100 ./build/default/app/sdgen --bench-conv2d --precision fp16 --algo tuned \
    --shape $shape > /tmp/row.txt 2>&1
  { echo "== $shape"; cat /tmp/row.txt; } >> "$OUT/rows.txt"
  echo "== $shape: $(awk '$4 == "tuned" {print $5, "ms", $NF, $(NF-1)}' /tmp/row.txt); dropped: $(grep -c 'autotune dropped' /tmp/row.txt)"
  grep "autotune dropped" /tmp/row.txt | head -5
done
