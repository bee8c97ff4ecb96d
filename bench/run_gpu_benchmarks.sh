#!/usr/bin/env bash
# GPU benchmarks run by `scripts/gpu_check.sh bench` (BIN, LIBEXEC and OUT_DIR set there).
# PTXB_BENCHMARKS picks them (default "eval solutions"): eval (A/A and the evaluator's costs,
# about 4 minutes) and solutions (every reference rung, three seeds: about 13 minutes).
set -uo pipefail
cd "$(dirname "$0")/.."
for b in ${PTXB_BENCHMARKS:-eval solutions}; do
  case "$b" in
    eval) bash bench/eval_bench.sh ;;
    solutions) bash bench/solutions_bench.sh ;;
    *) echo "run_gpu_benchmarks: unknown benchmark $b (eval, solutions)" >&2; exit 2 ;;
  esac
done
