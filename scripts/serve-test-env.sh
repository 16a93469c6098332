#!/usr/bin/env bash
# The Python environment of sdgen serve's API tests (tests/serve/): a git-ignored venv at .venv-serve with
# `requests` and the PyPI client `webuiapi` (a third-party client of stable-diffusion-webui's API, with its
# dependency Pillow), at pinned versions. Idempotent: does nothing when the venv already has them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv-serve"
pins=(webuiapi==0.9.17 requests==2.32.3 Pillow==11.0.0)
stamp="$venv/.sdgen-pins"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${pins[*]}" ]; then
  exit 0
fi
echo "serve-test-env: creating $venv (${pins[*]})"
py=python3; command -v "$py" >/dev/null || py=python
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
echo "${pins[*]}" > "$stamp"
