#!/usr/bin/env bash
# Session 25, call C (carry .gl .carry .whl; same bundle as call B): call B's in-GEMM split-K sum was 1.6x slower
# per split GEMM — its fully unrolled sum (up to 512 scalar atomic loads) is suspected of taking registers from
# the whole kernel. Now: at most 16 float4 loads in flight, plain loads after the acquiring barrier ("plain");
# the same with call B's atomic loads ("atomic": a copy of shaders/ through SDGEN_SHADER_DIR); the second launch
# ("sum", SDGEN_SPLIT_FIXUP=0). Split-K tests with validation first (float64; the two paths bit for bit);
# SDGEN_PIPELINE_STATS=1 in round 1 for the registers.
# Runs on the tree with scripts/device/sessions/s25-bc-split-fixup-rejected.patch applied (rejected, not in main).
set -uo pipefail
source scripts/device/python-env.sh >/dev/null 2>&1; source scripts/device/vulkan-env.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
SDGEN_VALIDATION=1 timeout 200 ./build/default/tests/ops/ops_tests \
  --gtest_filter='*CoopMatrixKernelWhereSupported*:*CoopBigTileSplitK*:*CoopWhereSupported*:*FusedLayerNorm*' > "$OUT/split-tests.log" 2>&1
echo "tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/split-tests.log" | tr '\n' ' ')"
grep -E "Failure|vulkan validation" "$OUT/split-tests.log" | head -8
rm -rf /tmp/sh-atomic && cp -r shaders /tmp/sh-atomic
python3 - <<'PY'
p='/tmp/sh-atomic/linear/gemm_coop.slang'
s=open(p).read()
old='float4 loadPartial4(uint64_t base, int index) { return F32Storage.load4(base, index); }'
new='''float4 loadPartial4(uint64_t base, int index) {
  Atomic<uint>* p = (Atomic<uint>*)((float*)base + index);
  return float4(asfloat(p[0].load(MemoryOrder.Relaxed)), asfloat(p[1].load(MemoryOrder.Relaxed)),
                asfloat(p[2].load(MemoryOrder.Relaxed)), asfloat(p[3].load(MemoryOrder.Relaxed)));
}'''
assert old in s; open(p,'w').write(s.replace(old,new))
PY
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
run() {  # mode round
  local env=(SDGEN_CACHE_DIR=/tmp/cache-$1) stats=()
  [ "$1" = sum ] && env+=(SDGEN_SPLIT_FIXUP=0)
  [ "$1" = atomic ] && env+=(SDGEN_SHADER_DIR=/tmp/sh-atomic)
  [ "$2" = 1 ] && env+=(SDGEN_PIPELINE_STATS=1)
  env "${env[@]}" ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 \
    --json "$OUT/prof-$1-r$2.json" > "$OUT/prof-$1-r$2.txt" 2> "$OUT/stats-$1-r$2.txt"
  echo "$1 round $2 rc=$?: $(grep -A6 'totals of unet' "$OUT/prof-$1-r$2.txt" | grep -E 'conv|linear|total' | tr -s ' ' | tr '\n' ' ')"
}
for r in 1 2; do for m in sum plain atomic; do run $m $r; done; done
for m in sum plain atomic; do echo "== $m registers/shared of the split GEMMs"; grep -E "split" "$OUT/stats-$m-r1.txt" | sort | uniq -c | sort -rn | head -6; done
python3 bench/profile_compare.py --graph unet --top 20 sum="$OUT/prof-sum-r1.json,$OUT/prof-sum-r2.json" \
  plain="$OUT/prof-plain-r1.json,$OUT/prof-plain-r2.json" atomic="$OUT/prof-atomic-r1.json,$OUT/prof-atomic-r2.json" > "$OUT/compare.txt" 2>&1
head -30 "$OUT/compare.txt"
for g in vae text; do python3 bench/profile_compare.py --graph $g --top 3 sum="$OUT/prof-sum-r2.json" plain="$OUT/prof-plain-r2.json" atomic="$OUT/prof-atomic-r2.json" 2>&1 | sed -n 1,5p; done
rm -f "$OUT"/stats-*.txt "$OUT"/prof-*.txt
