#!/usr/bin/env bash
# The one self-contained kernel file of a reference-solution rung, as the replay model submits it:
#   scripts/solution_kernel.sh BIN_DIR TASK RUNG >kernel.cu     (RUNG e.g. rung1_tma_wgmma)
# A rung that solutions/replay.json lists for TASK comes from `ptxbench tasks solution`, which
# renders the variant (causal tasks: the base task's file with `#define PTXB_CAUSAL 1` in front;
# local headers inlined). Any other rung is its own file, solutions/TASK/RUNG.cu.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1 task=$2 rung=$3
turn=$("$BIN/ptxbench" tasks solution "$task" --list 2>/dev/null |
  awk -v r="/$rung.cu" 'substr($3, length($3) - length(r) + 1) == r { print $2; exit }' || true)
if [[ -n $turn ]]; then exec "$BIN/ptxbench" tasks solution "$task" --turn "$turn"; fi
cat "solutions/$task/$rung.cu"
