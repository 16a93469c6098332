#!/usr/bin/env bash
# Session 15, call A (issue 18), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`: the residency bench
# with kernels compiled in-process (engine/slang_library.h), then, in the same call, one more cold run with
# SDGEN_SLANG_IN_PROCESS=0 (a slangc process per kernel, the code before) as the baseline.
set -uo pipefail
bash scripts/device/residency.sh --runs 2 2>&1 | grep -vE "it/s|Loading|deprecat|FutureWarning"
status=${PIPESTATUS[0]}
mkdir -p "$OUT/baseline"
SDGEN_SLANG_IN_PROCESS=0 OUT="$OUT/baseline" bash scripts/device/residency.sh --runs 1 --skip-diffusers 2>&1 |
  grep -E "cold|error|Error" | head -20
exit "$status"
