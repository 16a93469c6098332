#!/usr/bin/env bash
# Setup, configure, build and run every test (lavapipe on machines without a GPU; validation layers on).
set -euo pipefail
# scripts/test.sh --sanitize [ctest args]: the ASan + UBSan mode instead (scripts/test-sanitize.sh,
# docs/reliability.md).
# scripts/test.sh --ci: what .ci/run runs — every test as below, then the sanitizer stage: the host-side suites
# under ASan + UBSan with no Vulkan driver, the fuzz corpora replayed and each fuzz target run 30 s
# (scripts/test-sanitize.sh --host; ~15 min on 2 cores).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ "${1:-}" = "--sanitize" ]; then
  shift
  exec bash scripts/test-sanitize.sh "$@"
fi
ci=0
if [ "${1:-}" = "--ci" ]; then ci=1; shift; fi
bash scripts/setup.sh
preset="${SDGEN_PRESET:-default}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "${SDGEN_TEST_JOBS:-2}" "$@"
if [ "$ci" = 1 ]; then
  SDGEN_FUZZ_JOBS="${SDGEN_FUZZ_JOBS:-2}" bash scripts/test-sanitize.sh --host
fi
