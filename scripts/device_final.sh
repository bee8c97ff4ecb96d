#!/usr/bin/env bash
# One H200 call after a merge: GPU tests (all but the solutions regression, which the evaluations
# below repeat), the new reference solutions with fresh seeds, and the replay run of paper-h100.
# Uses binaries carried in .devcarry/bin (scripts/device_carry.sh). Results under $OUT.
#   scripts/device_final.sh [tests] [solutions] [replay]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT_DIR"
source <(grep -E "^(CUDNN_DIR|CUBLAS_DIR|export)" scripts/gpu_check.sh)
BAKED=$(cat .devcarry/source_dir)
[[ -e $BAKED ]] || { mkdir -p "$(dirname "$BAKED")"; ln -sfn "$PWD" "$BAKED"; }
BIN=$PWD/.devcarry/bin
export PTXBENCH_CACHE_DIR=/tmp/ptxb-cache
STEPS=" ${*:-tests solutions replay} "
want() { [[ $STEPS == *" $1 "* ]]; }
summary=$OUT_DIR/summary.txt
if want tests; then
  "$BIN/ptxbench_gpu_tests" --gtest_filter='-SolutionsGpu.*' --gtest_output="json:$OUT_DIR/gpu_tests.json" \
    >"$OUT_DIR/gpu_tests.log" 2>&1
  echo "gpu tests rc=$?: $(grep -E '^\[  (PASSED|FAILED) ' "$OUT_DIR/gpu_tests.log" | tr '\n' ' ')" | tee -a "$summary"
  grep -E '^\[  FAILED  \]' "$OUT_DIR/gpu_tests.log" | head -20 | tee -a "$summary"
fi
if want solutions; then
  W=$OUT_DIR/solutions && mkdir -p "$W"
  for spec in ${SOLUTION_SPECS:-mha_bwd_d128:rung1_tma_wgmma:13 mha_bwd_d128_causal:rung1_tma_wgmma:13 \
              mha_with_lse_d128:rung2_warp_specialized:12 mha_with_lse_d128_causal:rung2_warp_specialized:12}; do
    IFS=: read -r task rung seed <<<"$spec"
    "$BIN/ptxbench" eval "solutions/$task/$rung.cu" --task "$task" --json --seed "$seed" \
      >"$W/${task}__${rung}__$seed.json" 2>"$W/${task}__${rung}__$seed.err"
    echo "$task $rung $seed rc=$?" | tee -a "$summary"
  done
  python3 bench/solutions_summary.py "$W" >"$OUT_DIR/solutions.md"
  cat "$OUT_DIR/solutions.md" | tee -a "$summary" | cut -c1-220
  tar czf "$OUT_DIR/solutions.tgz" -C "$OUT_DIR" solutions && rm -rf "$W"
fi
if want replay; then
  start=$(date +%s)
  "$BIN/ptxbench" run --model replay --suite paper-h100 --variants base --trajectories 1 --turns 2 \
    --out "$OUT_DIR/replay-run" >"$OUT_DIR/replay.log" 2>&1
  echo "replay rc=$? in $(( $(date +%s) - start )) s" | tee -a "$summary"
  tail -15 "$OUT_DIR/replay.log" | tee -a "$summary"
  tar czf "$OUT_DIR/replay-run.tgz" -C "$OUT_DIR" replay-run && rm -rf "$OUT_DIR/replay-run"
fi
