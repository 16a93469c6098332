#!/usr/bin/env bash
# Session 42, call A (issue 22; carry .gl .carry .whl after `scripts/device/pack.sh
# build/default/tests/model_check/sdgen_model_check` and `scripts/device/slim-tree.sh on`).
# SDXL's fp16 1024^2 step as the product plans it: sdgen_model_check now tunes its convolutions as sdgen does
# (session 41; every SDXL step time it reported, sessions 15 and 33-41, was the rule's; docs/perf.md session 41).
# Variants, each a process with its own fresh tuning cache, two rounds, beside diffusers' eager and CUDA-graph step
# in the same call:
#   tuned (today's defaults), rule (SDGEN_AUTOTUNE=0: the convolutions by the rule, as sessions 15 and 33-41 timed),
#   wide160 (SDGEN_WIDE_HALF_TILE=160: the 256x160 fp16-accumulator linear tile for the 64^2 level's N-640 layers,
#   built in session 40 and not yet measured; its 128-wide form lost 1.3 ms in session 41).
# Then the profile of "tuned" (where the step's time goes). Arguments replace the variants (s40-b.sh's syntax).
set -uo pipefail
[ $# -eq 0 ] && set -- tuned rule:SDGEN_AUTOTUNE=0 wide160:SDGEN_WIDE_HALF_TILE=160
PROFILE=${PROFILE:-tuned} exec bash scripts/device/sessions/s40-b.sh "$@"
