#!/usr/bin/env bash
# Session 14, call D (issues 18, 19), carry .gl .carry .whl, after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`: the residency bench
# (load, peak, cold compile: a waiting thread now compiles its own queued kernel, the autotune no longer times
# Winograd next to coop) and the end-to-end bench (decoded images post-processed without a libm call per value).
set -uo pipefail
bash scripts/device/residency.sh 2>&1 | grep -vE "it/s|Loading|deprecat|FutureWarning"
status=${PIPESTATUS[0]}
bash scripts/device/e2e.sh 2>&1 | grep -vE "it/s|Loading|deprecat|FutureWarning" | tail -60
exit $(( status | PIPESTATUS[0] ))
