#!/usr/bin/env bash
# Setup, configure, build, then generate an image with the built-in model (models/builtin/sdgen-tiny): runs on
# any machine with a Vulkan driver, CPU-only ones included (Mesa lavapipe). Extra arguments go to sdgen.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target sdgen
./build/default/app/sdgen --demo
exec ./build/default/app/sdgen -p "a small red circle at the top left on a blue background" -s 42 -o sdgen-demo.png "$@"
