#!/usr/bin/env bash
# The one self-contained kernel file of a reference-solution rung, as the replay model submits it:
#   scripts/solution_kernel.sh BIN_DIR TASK RUNG >kernel.cu     (RUNG e.g. rung1_tma_wgmma)
# A rung that solutions/replay.json lists for TASK comes from `ptxbench tasks solution`, which
# renders the variant (causal tasks: the base task's file with `#define PTXB_CAUSAL 1` in front;
# local headers inlined). A rung of the task's own folder is that file. Any other rung is looked
# for in the folder of the task's replay turns and rendered the same way: the defines of the
# task's last turn in front, its quoted local includes inlined (a rung the replay model no longer
# answers with, e.g. rung 2 of a task whose last turn is rung 3, stays testable).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1 task=$2 rung=$3
list=$("$BIN/ptxbench" tasks solution "$task" --list 2>/dev/null || true)
turn=$(awk -v r="/$rung.cu" 'substr($3, length($3) - length(r) + 1) == r { print $2; exit }' <<<"$list")
if [[ -n $turn ]]; then exec "$BIN/ptxbench" tasks solution "$task" --turn "$turn"; fi
if [[ -f solutions/$task/$rung.cu ]]; then exec cat "solutions/$task/$rung.cu"; fi
last=$(tail -1 <<<"$list")
[[ -n $last ]] || { echo "solution_kernel: no rung $rung for $task (and no replay turns)" >&2; exit 1; }
dir=solutions/$(dirname "$(awk '{print $3}' <<<"$last")")
[[ -f $dir/$rung.cu ]] || { echo "solution_kernel: $dir/$rung.cu not found" >&2; exit 1; }
# "TASK N FILE with K=V, K=V": one #define per K=V.
sed -n 's/^.* with //p' <<<"$last" | tr ',' '\n' | sed -n 's/^ *\([A-Za-z_0-9]*\)=\(.*\)$/#define \1 \2/p'
while IFS= read -r line; do
  if [[ $line =~ ^#include\ \"([^\"/]+)\" ]] && [[ -f $dir/${BASH_REMATCH[1]} ]]; then
    cat "$dir/${BASH_REMATCH[1]}"
  else
    printf '%s\n' "$line"
  fi
done <"$dir/$rung.cu"
