#!/usr/bin/env bash
# Setup, configure, build and run every test (lavapipe on machines without a GPU; validation layers on).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
preset="${SDGEN_PRESET:-default}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "${SDGEN_TEST_JOBS:-2}" "$@"
