#!/usr/bin/env bash
# Session 10, call B: the SD 1.5 fp16 step profile with every kernel compiled at -O0 and at -O2 (spirv-opt),
# and the SD 1.5 linear shapes at both: which kernels gain from spirv-opt.
set -uo pipefail
out=$OUT
source scripts/device/python-env.sh; source scripts/device/vulkan-env.sh
python3 tests/reference/make_sd15_random.py /tmp/sd15 /tmp/sd15/refs > /tmp/make.log 2>&1 || tail -5 /tmp/make.log
for O in 0 2; do
  export SDGEN_CACHE_DIR=/tmp/sdcache$O SDGEN_SLANG_OPT=$O
  for i in 1 2; do timeout 200 ./build/default/app/sdgen --profile-conv -m /tmp/sd15/sd15-random -W 512 -H 512 --precision fp16 --json $out/prof$O.json > $out/prof$O.txt 2>&1; done
  echo "== O$O"; grep -A8 "totals of unet" $out/prof$O.txt | head -9; grep -iE "replay|step" $out/prof$O.txt | tail -3
  timeout 200 ./build/default/bench/linear_bench bench/data/sd15_linear_shapes.json --rounds 10 --reps 5 --json $out/linall$O.json auto > /tmp/la$O.log 2>&1
  tail -3 /tmp/la$O.log | cut -c1-160
done
python3 - $out <<'PY'
import json,sys,math
o=sys.argv[1]
a={r["name"]:r for r in json.load(open(o+"/linall0.json"))["rows"]}
b={r["name"]:r for r in json.load(open(o+"/linall2.json"))["rows"]}
lr=[]
for n in a:
    x,y=a[n]["ms"],b[n]["ms"]; lr.append(math.log(y/x))
    print(f"{n:28s} O0 {x:.4f} O2 {y:.4f} ratio {y/x:.2f}")
print("geomean O2/O0", math.exp(sum(lr)/len(lr)))
PY
