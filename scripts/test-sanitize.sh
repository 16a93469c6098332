#!/usr/bin/env bash
# scripts/test.sh --sanitize: the host-side suites under AddressSanitizer + UndefinedBehaviorSanitizer (leaks are
# reports: LeakSanitizer is on), the fuzz corpora replayed, then every fuzz target fuzzed briefly
# (docs/reliability.md). Clang builds build/asan (the asan preset). Any report fails the run.
#   SDGEN_SANITIZE_LABELS  ctest labels to run (regex; default below)
#   SDGEN_FUZZ_SECONDS     seconds of fuzzing per target (default 30; 0 skips fuzzing, the replay still runs)
# Extra arguments go to ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
# clang and its sanitizer/libFuzzer runtimes (Debian 12: clang 14).
missing=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "test-sanitize: installing ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

start=$(date +%s)
cmake --preset asan >/dev/null
# Only what the chosen suites need: no GUI, benchmarks, kernel (ops/vulkan) suites or built-in model grid.
cmake --build --preset asan -j "$(nproc)" --target models_tests app_tests graph_tests serve_tests sdgen sdgen_model_check \
  sdgen_no_dlclose fuzzers
built=$(date +%s)
labels="${SDGEN_SANITIZE_LABELS:-^(graph|app|parity|fuzz)$}"
ctest --preset asan -L "$labels" -j "${SDGEN_TEST_JOBS:-2}" "$@"
tested=$(date +%s)
seconds="${SDGEN_FUZZ_SECONDS:-30}"
if [ "$seconds" != 0 ]; then
  bash scripts/fuzz.sh "$seconds"
fi
echo "test-sanitize: build $((built - start)) s, tests $((tested - built)) s, fuzzing $(( $(date +%s) - tested )) s"
