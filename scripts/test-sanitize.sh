#!/usr/bin/env bash
# scripts/test.sh --sanitize: the host-side suites under AddressSanitizer + UndefinedBehaviorSanitizer (leaks are
# reports: LeakSanitizer is on), the fuzz corpora replayed, then every fuzz target fuzzed briefly
# (docs/reliability.md). Clang builds build/asan (the asan preset). Any report fails the run.
#   scripts/test-sanitize.sh [ctest args]   the ctest labels below on lavapipe (~1 h on 2 cores)
#   scripts/test-sanitize.sh --host         CI's stage (scripts/test.sh --ci): the host-side suites of
#                                           scripts/sanitizers/host-tests.txt with no Vulkan driver at all, the
#                                           corpus replay, then the fuzzing
#   SDGEN_SANITIZE_LABELS  ctest labels to run (regex; default below; not with --host)
#   SDGEN_FUZZ_SECONDS     seconds of fuzzing per target (default 30; 0 skips fuzzing, the replay still runs)
# Extra arguments go to ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
host=0
if [ "${1:-}" = "--host" ]; then host=1; shift; fi
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
# --host builds only the test sources that define host-side suites (scripts/sanitizers/device-only-tests.cmake).
cmake --preset asan -DSDGEN_HOST_TESTS_ONLY=$([ "$host" = 1 ] && echo ON || echo OFF) >/dev/null
if [ "$host" = 1 ]; then
  # The test binaries, sdgen (SdgenBinary.* runs it) and the fuzzers; no GUI, benchmarks, kernel suites.
  cmake --build --preset asan -j "$(nproc)" --target models_tests app_tests graph_tests serve_tests sdgen \
    sdgen_no_dlclose fuzzers
  built=$(date +%s)
  # The test preset's environment (ASan/UBSan/LSan options, SDGEN_SLANG_IN_PROCESS=0), the no-dlclose preload,
  # and no Vulkan driver: a listed test that starts using the device fails instead of passing on lavapipe.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$root/scripts/sanitizers/lsan.supp:print_suppressions=0"
  export SDGEN_SLANG_IN_PROCESS=0 VK_ICD_FILENAMES=/nonexistent-icd.json VK_DRIVER_FILES=/nonexistent-icd.json
  export SDGEN_CACHE_DIR="$root/build/asan/kernel-cache"
  failed=0
  while read -r binary filter; do
    case "$binary" in ''|'#'*) continue ;; esac
    path=$(find build/asan/tests -name "$binary" -type f -perm -u+x | head -1)
    [ -n "$path" ] || { echo "test-sanitize: $binary is not built" >&2; exit 1; }
    echo "test-sanitize: $binary (host-side suites, no Vulkan driver)"
    # Every listed suite must be in the binary: a filter naming a suite that is gone (or whose source the build
    # left out) would otherwise run nothing and pass.
    present=$("$path" --gtest_list_tests --gtest_filter="$filter" | sed -n 's/^\([^ ].*\)\.\( *#.*\)\{0,1\}$/\1/p' | sort -u)
    for suite in $(tr ':' '\n' <<<"$filter" | sed 's/\.\*$//' | sort -u); do
      grep -qxF "$suite" <<<"$present" || { echo "test-sanitize: $binary has no suite $suite (scripts/sanitizers/host-tests.txt)" >&2; failed=1; }
    done
    LD_PRELOAD="$root/build/asan/libsdgen_no_dlclose.so" "$path" --gtest_filter="$filter" --gtest_brief=1 || failed=1
  done < scripts/sanitizers/host-tests.txt
  unset VK_ICD_FILENAMES VK_DRIVER_FILES
  ctest --preset asan -L '^fuzz$' -j "${SDGEN_TEST_JOBS:-2}" "$@" || failed=1
  [ "$failed" = 0 ] || { echo "test-sanitize: host-side suites or corpus replay failed" >&2; exit 1; }
else
  # Only what the chosen suites need: no GUI, benchmarks, kernel (ops/vulkan) suites or built-in model grid.
  cmake --build --preset asan -j "$(nproc)" --target models_tests app_tests graph_tests serve_tests sdgen \
    sdgen_model_check sdgen_no_dlclose fuzzers
  built=$(date +%s)
  labels="${SDGEN_SANITIZE_LABELS:-^(graph|app|parity|fuzz)$}"
  ctest --preset asan -L "$labels" -j "${SDGEN_TEST_JOBS:-2}" "$@"
fi
tested=$(date +%s)
seconds="${SDGEN_FUZZ_SECONDS:-30}"
if [ "$seconds" != 0 ]; then
  bash scripts/fuzz.sh "$seconds"
fi
echo "test-sanitize: build $((built - start)) s, tests $((tested - built)) s, fuzzing $(( $(date +%s) - tested )) s"
