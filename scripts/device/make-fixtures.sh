#!/usr/bin/env bash
# Runs on the device machine (its CPU: torch there, none here) and writes the reference fixtures of tests/data/
# (tests/reference/make_fixtures.py) as tarballs under $OUT, which `run` brings back; unpack them here with
#   for f in <files_at>/data-*.tar.gz; do tar -xzf "$f" -C tests/data; done
# Needs .whl/ carried (diffusers and importlib_metadata wheels; for --only lora also peft, accelerate and psutil:
# docs/reference-fixtures.md says which).
# Arguments are passed to make_fixtures.py (e.g. --only models,components).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
export TOKENIZERS_PARALLELISM=false CUDA_VISIBLE_DEVICES=""
OUT=${OUT:-/tmp/fixtures-out}
mkdir -p "$OUT"
if ! python3 -c "import diffusers, peft" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -c "import torch, diffusers, transformers; print('torch', torch.__version__, 'diffusers', diffusers.__version__, 'transformers', transformers.__version__)"
GEN=/tmp/sdgen-fixtures
rm -rf "$GEN" && mkdir -p "$GEN"
status=0
python3 tests/reference/make_fixtures.py --out "$GEN" "$@" 2>&1 | tee "$OUT/make-fixtures.log" || status=$?
# One tarball per part keeps each under the 16 MiB a returned file may have.
cd "$GEN"
pack() {  # pack NAME PATH...: only the paths that exist
  local name=$1; shift
  local have=()
  for p in "$@"; do [ -e "$p" ] && have+=("$p"); done
  if [ ${#have[@]} -gt 0 ]; then tar -czf "$OUT/$name" "${have[@]}"; fi
}
pack data-sd1.tar.gz tiny-sd1 tiny-sd1-ldm.safetensors
pack data-sd2.tar.gz tiny-sd2 tiny-sd2-ldm.safetensors
pack data-fixtures.tar.gz fixtures
pack data-tf5.tar.gz tiny-clip-tf5
pack data-inpaint.tar.gz tiny-sd1-inpaint tiny-sd1-inpaint-unet-ldm.safetensors
pack data-taesd.tar.gz tiny-taesd tiny-taesd-madebyollin tiny-taesd-sd1 tiny-taesd-sd1-madebyollin fixtures/taesd*
pack data-sdxl.tar.gz tiny-sdxl
ls -la "$OUT"
exit $status
