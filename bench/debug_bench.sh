#!/usr/bin/env bash
# The debug stage on the H200 (docs/eval.md "Debug stage"), run by bench/run_gpu_benchmarks.sh
# with PTXB_BENCHMARKS=debug (`PTXB_BENCHMARKS=debug bash scripts/gpu_check.sh bench`):
# every failure kernel of testdata/debug/ through `ptxbench eval --operation debug`, four at a
# time. For each kernel it keeps, under $OUT_DIR/debug/<kernel>/:
#   result.json      the whole EvalResult (result.debug is the stage's record)
#   sanitizer.txt    compute-sanitizer's raw output   } goldens for the parsers' tests
#   cuda_gdb.txt     cuda-gdb's raw output            } (testdata/eval/sanitizer, .../cuda_gdb)
#   debug.txt        the feedback's "## Debug" section
# and checks the kernel.cu line the report points at against the kernel's `expect:` line
# (debug_bench_summary.py -> $OUT_DIR/debug/summary.md; exit 1 when a report misses).
# DEBUG_GOLDENS=DIR also writes each result there as the goldens of
# tests/eval/debug_goldens_test.cc (testdata/debug/h200).
# Needs BIN (with ptxbench) and OUT_DIR. About 30 s per kernel, 4 at once: under 3 minutes
# for the 12 kernels, compiles included.
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
W=$OUT_DIR/debug && mkdir -p "$W"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
command -v cuda-gdb >/dev/null || echo "debug_bench: warning: no cuda-gdb on PATH: core dumps are skipped" >&2
command -v compute-sanitizer >/dev/null || echo "debug_bench: warning: no compute-sanitizer on PATH" >&2

debug_one() {
  local kernel=$1 name
  name=$(basename "$kernel" .cu)
  mkdir -p "$W/$name"
  local start end
  start=$(date +%s.%N)
  # 120 s: far above the stage's 30 s budget plus compile and start-up; a stuck evaluation
  # must not hold the others.
  timeout 120 "$BIN/ptxbench" eval "$kernel" --task gemm_n7168_k5120 --operation debug --json \
    >"$W/$name/result.json" 2>"$W/$name/stderr.txt"
  echo "exit $?" >"$W/$name/exit.txt"
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')" >"$W/$name/wall_s.txt"
}
export -f debug_one
export BIN W

ls testdata/debug/*.cu | xargs -P 4 -I{} bash -c 'debug_one {}'
python3 bench/debug_bench_summary.py testdata/debug "$W" ${DEBUG_GOLDENS:+"$DEBUG_GOLDENS"}
