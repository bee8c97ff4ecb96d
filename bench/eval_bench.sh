#!/usr/bin/env bash
# Evaluator benchmarks on the H200, run by bench/run_gpu_benchmarks.sh:
#   1. A/A: the GEMM reference in the candidate slot (--test-reference-as-candidate, an option of
#      ptxbench-testing, the testing build of ptxbench), 10 evals:
#      median speedup and coefficient of variation of the per-eval medians.
#   2. Our CUPTI device time vs ncu's gpu__time_duration.sum, per reference (one warm call).
#   3. Reference latency and TFLOP/s for the five paper tasks.
#   4. Wall time per stage of one evaluation per paper task (cached compile, no sanitizer, NCU on).
# Needs BIN (the install prefix's bin/, with ptxbench; ptxbench-testing is taken from TESTS,
# default the prefix's tests/) and OUT_DIR; LIBEXEC (ptxbench-runner, libptxbench_reference.so)
# defaults to the prefix's libexec/ptxbench.
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
LIBEXEC=${LIBEXEC:-$BIN/../libexec/ptxbench}
W=$OUT_DIR/eval_bench && mkdir -p "$W"
TASKS=(gemm_n7168_k5120 mha_with_lse_d128 mha_with_lse_d128_causal mha_bwd_d128 mha_bwd_d128_causal)
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}

# A stub `run` for each task: it only has to compile; the library runs in its slot.
source bench/task_stubs.sh
make_stubs "$W" "${TASKS[@]}" || exit 1

echo "== 1. A/A GEMM x10"
for i in $(seq 1 10); do
  "${TESTS:-$BIN/../tests}/ptxbench-testing" eval "$W/stub_gemm_n7168_k5120.cu" --task gemm_n7168_k5120 --json --no-ncu \
    --test-reference-as-candidate --seed "$i" >"$W/aa_$i.json" 2>"$W/aa_$i.err" || echo "aa $i: exit $?"
done

echo "== 3/4. one evaluation per paper task (library in the candidate slot, NCU on)"
for t in "${TASKS[@]}"; do
  s=$(date +%s.%N)
  "${TESTS:-$BIN/../tests}/ptxbench-testing" eval "$W/stub_$t.cu" --task "$t" --json --test-reference-as-candidate >"$W/eval_$t.json" 2>"$W/eval_$t.err" || echo "eval $t: exit $?"
  e=$(date +%s.%N)
  echo "$t $(python3 -c "print($e-$s)")" >>"$W/wall.txt"
done

echo "== 2. ncu gpu__time_duration.sum per reference"
for t in "${TASKS[@]}"; do
  sel=$(python3 -c "import json;t=json.load(open('$W/task_$t.json'));print(t['reference_backend']+(':causal' if t['name'].endswith('_causal') else ''))")
  sig=$(python3 -c "import json;print(json.load(open('$W/task_$t.json'))['signature'])")
  PTXBENCH_REFERENCE=$sel PTXBENCH_REFERENCE_SIGNATURE=$sig ncu --clock-control none --profile-from-start off \
    --metrics gpu__time_duration.sum --csv --page raw --print-units base \
    "$LIBEXEC/ptxbench-runner" --self-contained --so "$LIBEXEC/libptxbench_reference.so" --params-json "$W/params_$t.json" \
    >"$W/ncu_time_$t.csv" 2>"$W/ncu_time_$t.err" || echo "ncu $t: exit $?"
done

python3 bench/eval_bench_summary.py "$W" "${TASKS[@]}" | tee "$OUT_DIR/eval_bench.md"
