#!/usr/bin/env bash
# Reference solutions (solutions/) through `ptxbench eval` on the H200, three evaluations each
# with fresh seeds; writes $OUT_DIR/reference_solutions.md (copied to bench/results/).
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
W=$OUT_DIR/solutions && mkdir -p "$W"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
# Every rung of every task: those the replay lists (causal tasks reuse their base task's files
# with PTXB_CAUSAL=1) and the task folders' own files, each rendered by scripts/solution_kernel.sh
# to the one file a model would submit.
K=$OUT_DIR/kernels && mkdir -p "$K"
{
  "$BIN/ptxbench" tasks solution --list | while read -r task _ source _; do
    echo "$task $(basename "$source" .cu)"
  done
  for f in solutions/*/rung*.cu; do echo "$(basename "$(dirname "$f")") $(basename "$f" .cu)"; done
} | sort -u | while read -r task rung; do
  bash scripts/solution_kernel.sh "$BIN" "$task" "$rung" >"$K/${task}__${rung}.cu"
done
for f in "$K"/*.cu; do
  name=$(basename "$f" .cu)
  task=${name%%__*} rung=${name#*__}
  for seed in 11 12 13; do
    "$BIN/ptxbench" eval "$f" --task "$task" --json --seed "$seed" >"$W/${task}__${rung}__$seed.json" 2>"$W/${task}__${rung}__$seed.err" || true
  done
done
# Forward attention also at S = 1024 and 8192 (bench/tasks-seqlen), one seed each.
for f in "$K"/mha_with_lse_d128*.cu; do
  name=$(basename "$f" .cu)
  task=${name%%__*} rung=${name#*__}
  for s in 1024 8192; do
    "$BIN/ptxbench" --tasks-dir bench/tasks-seqlen eval "$f" --task "${task}_s$s" --json --seed 11 \
      >"$W/${task}_s${s}__${rung}__11.json" 2>"$W/${task}_s${s}__${rung}__11.err" || true
  done
done
python3 bench/solutions_summary.py "$W" | tee "$OUT_DIR/reference_solutions.md"
