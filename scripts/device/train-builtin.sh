#!/usr/bin/env bash
# Trains the built-in model (models/builtin/train/train.py) on the GPU machine, from the repository root.
# Carry .whl (the diffusers 0.42.1 and importlib_metadata wheels; see docs/builtin-model.md). Usage:
#   scripts/device/train-builtin.sh full --vae-init models/builtin/sdgen-tiny/vae   # the run behind the model
#   scripts/device/train-builtin.sh smoke|resume [extra train.py flags]
# The script's wall-clock deadlines (--unet-until, --sweep-until) count from TRAIN_T0, set here before
# anything else; python is stopped at PYTHON_LIMIT seconds (default 550) whatever happens, so that what it
# wrote is still packed before the device call's own limit. Everything the run writes (model folder,
# docs/builtin, the fixture) comes back as $OUT/builtin.tgz.part-*, with the log as $OUT/train.log. Unpack
# here with: cat <files_at>/builtin.tgz.part-* | tar -xzf - -C /work/main
set -uo pipefail
export TRAIN_T0=$(date +%s.%N)
mode=${1:-full}
shift || true
out=${OUT:-/tmp/builtin-out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/diffusers-0.42.1-py3-none-any.whl .whl/importlib_metadata-*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUBLAS_WORKSPACE_CONFIG=:4096:8
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader || true
limit=${PYTHON_LIMIT:-550}
elapsed=$(python3 -c "import time; print(int(time.time() - $TRAIN_T0))")
timeout -k 5 $((limit - elapsed)) python3 models/builtin/train/train.py --mode "$mode" "$@" 2>&1 \
  | grep --line-buffered -v -E "FutureWarning|warnings.warn|UserWarning: .*deterministic" | tee "$out/train.log"
status=${PIPESTATUS[0]}
paths=()
for p in models/builtin/sdgen-tiny docs/builtin tests/data/fixtures/builtin_reference.safetensors \
         tests/data/fixtures/builtin_reference.json tests/data/fixtures/builtin_semantic_grid.json; do
  [ -e "$p" ] && paths+=("$p")
done
[ ${#paths[@]} -gt 0 ] && tar -czf - "${paths[@]}" | split -b 15M - "$out/builtin.tgz.part-"
ls -la "$out"
echo "python exit status $status, $(python3 -c "import time; print(int(time.time() - $TRAIN_T0))") s after TRAIN_T0"
exit "$status"
