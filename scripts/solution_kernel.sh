#!/usr/bin/env bash
# The one self-contained kernel file of a reference-solution rung, as the replay model submits it:
#   scripts/solution_kernel.sh BIN_DIR TASK RUNG >kernel.cu     (RUNG e.g. rung1_tma_wgmma)
# `ptxbench tasks solution TASK --rung RUNG` renders it: the replay turn with that source (a
# causal task: the base task's file with `#define PTXB_CAUSAL 1` in front; local headers
# inlined), else the task's own solutions/TASK/RUNG.cu, else the file of that name beside the
# task's last turn with that turn's defines (a rung the replay model no longer answers with).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "$1/ptxbench" tasks solution "$2" --rung "$3" --replay-dir "$PWD/solutions"
