#!/usr/bin/env bash
# Setup, configure, build, then run the main job: image generation with the built-in model once it exists.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target sdgen
exec ./build/default/app/sdgen --demo "$@"
