#!/usr/bin/env bash
# Session 22, call F (issues 19, 17), carry .gl .carry .whl, after `scripts/device/pack.sh` and `slim-tree.sh on`:
# call C's script (the phases' tests with validation, then bench/e2e.py beside diffusers and the profile of the
# same call) on the session's final code (the upsamplers by output phase, the residual add loaded into the
# accumulators).
exec bash scripts/device/sessions/s22-c.sh "$@"
