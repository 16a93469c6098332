#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (docs/reliability.md), one at a time, each for SECONDS (default 30),
# starting from its committed seed corpus; inputs it finds go to build/<preset>/fuzz-work/<target>/, never into
# fuzz/corpus/. Any crash, sanitizer report, leak, uncaught exception or input slower than 1 s (-timeout)
# stops that target and fails the script; the reproducer is left as build/<preset>/fuzz-work/crash-*.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (SDGEN_FUZZ_PRESET: asan (default) or fuzz; must be built;
#                                               SDGEN_FUZZ_JOBS: targets at a time, default 1)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-30}"; shift || true
preset="${SDGEN_FUZZ_PRESET:-asan}"
bin="$root/build/$preset/fuzz"
work="$root/build/$preset/fuzz-work"
targets=("$@")
if ((${#targets[@]} == 0)); then
  for d in fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
jobs="${SDGEN_FUZZ_JOBS:-1}"
for t in "${targets[@]}"; do
  [ -x "$bin/$t" ] || { echo "fuzz: $bin/$t is not built (cmake --build --preset $preset --target fuzzers)" >&2; exit 1; }
done
# One target: its run, then one line with its result (and the end of its log when it failed).
fuzz_one() {
  local t=$1 start result runs
  mkdir -p "$work/$t"
  start=$(date +%s)
  # -timeout=1: an input slower than 1 s is a finding (the issue's hang bound). -rss_limit_mb: a parser that
  # allocates without bound is one too. -print_final_stats: the run count for the record.
  if "$bin/$t" "$work/$t" "fuzz/corpus/$t" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 \
       -artifact_prefix="$work/" -print_final_stats=1 >"$work/$t.log" 2>&1; then
    result=ok
  else
    result=FAILED
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$t.log" | grep -o '[0-9]*$' || echo '?')
  printf 'fuzz: %-22s %-6s %5ss %10s runs (log: %s)\n' "$t" "$result" "$(( $(date +%s) - start ))" "$runs" "$work/$t.log"
  [ "$result" = ok ] || { tail -40 "$work/$t.log" >&2; return 1; }
}
status=0
pids=()
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  pids+=($!)
  if ((${#pids[@]} >= jobs)); then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
