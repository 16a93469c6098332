# Sourced on the GPU machine: makes the carried wheels in .whl/ (diffusers, importlib_metadata) importable by the
# python3 that holds torch and transformers, and keeps Hugging Face libraries offline.
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 TOKENIZERS_PARALLELISM=false
if ! python3 -c "import diffusers" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
