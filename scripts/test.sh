#!/usr/bin/env bash
# Setup, configure, build and run every test (lavapipe on machines without a GPU; validation layers on).
set -euo pipefail
# scripts/test.sh --sanitize [ctest args]: the ASan + UBSan mode instead (scripts/test-sanitize.sh,
# docs/reliability.md).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ "${1:-}" = "--sanitize" ]; then
  shift
  exec bash scripts/test-sanitize.sh "$@"
fi
bash scripts/setup.sh
preset="${SDGEN_PRESET:-default}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "${SDGEN_TEST_JOBS:-2}" "$@"
