#!/usr/bin/env bash
# Session 15, call B (issue 18), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`: call A showed that a
# second cold run reuses the NVIDIA driver's shader cache (byte-identical SPIR-V); residency.py now gives each
# cold run an empty driver cache too, three cold runs. In-process kernel compiles (the results file), then the
# same cold runs with SDGEN_SLANG_IN_PROCESS=0 (a slangc process per kernel) in the same call as the baseline.
set -uo pipefail
bash scripts/device/residency.sh --runs 2 --cold-runs 3 2>&1 | grep -vE "it/s|Loading|deprecat|FutureWarning|WARNING|wrote|sd15:|tokenizer"
status=${PIPESTATUS[0]}
mkdir -p "$OUT/baseline"
SDGEN_SLANG_IN_PROCESS=0 OUT="$OUT/baseline" bash scripts/device/residency.sh --runs 1 --cold-runs 3 --skip-diffusers 2>&1 |
  grep -E "cold|error|Error" | head -20
exit "$status"
