#!/usr/bin/env bash
# The one GPU script (H200, sm_90a), run from the repository root through the device tool.
#
#   scripts/gpu_check.sh [STEP...] [options]
#
# Steps (default: tests bench):
#   tests      ptxbench_gpu_tests (CTest label `gpu`)            --gtest-filter PATTERN
#   integrity  the adversarial suite of docs/integrity.md: every kernel of
#              testdata/integrity/expected.json through the real `ptxbench eval`, verdicts
#              compared with the manifest (IntegritySuiteOnGpu)   --only id1,id2 --budget SECONDS
#   solutions  reference solutions through `ptxbench eval`, one seed each: $SOLUTION_SPECS
#              ("task:rung:seed ...", default: every solutions/<task>/rung*.cu and the causal
#              variants of the attention rungs, seed 11)
#   replay     `ptxbench run --model replay` of the paper-h100 suite (2 turns)
#   bench      the evaluator and solutions benchmarks (bench/run_gpu_benchmarks.sh;
#              PTXB_BENCHMARKS="eval" or "solutions" runs one of them; "service" the evaluation
#              service's checks, bench/service_gpu.sh; "flashinfer" the GQA references,
#              bench/flashinfer_bench.sh, from a build with -DPTXB_WITH_FLASHINFER=ON;
#              "gemm_sweep", "fwd_sweep", "bwd_sweep" the expert rungs' knob sweeps; the full
#              list: bench/run_gpu_benchmarks.sh)
#   samples    real ncu / compute-sanitizer output for the parsers' golden files
#              (testdata/eval/ncu, testdata/eval/sanitizer): $SAMPLE_VARIANTS of
#              testdata/eval/gemm_variants.cu (default: 0)
# `ptxbench env` is always recorded first.
#
# Binaries: an install prefix, no source paths compiled in (docs/architecture.md "Install
# layout"). scripts/device_carry.sh installs a CUDA build made on the development machine into
# .devcarry/ (bin/, libexec/ptxbench/, share/ptxbench/, tests/), carried with
# `carry: [".devcarry"]`; without it this script builds and installs on the device
# (build-device/, build-device/prefix). The test binaries find the tree and the installed CLI
# through PTXB_SOURCE_DIR, PTXB_TESTDATA_DIR, PTXB_CLI_PATH, PTXB_RUNNER_PATH, set here.
# Logs and results go to $OUT (the device tool's return folder) or ./gpu-out; summary.txt
# collects one line per step. Exit status: 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT_DIR=${OUT:-$ROOT/gpu-out}
FILTER='*'
ONLY=""
BUDGET=540
STEPS=()
while (($#)); do
  case "$1" in
    tests | integrity | solutions | replay | bench | samples) STEPS+=("$1") ;;
    --tests-only) STEPS=(tests) ;;
    --gtest-filter) FILTER=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --budget) BUDGET=$2; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check: unknown step or option $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done
((${#STEPS[@]})) || STEPS=(tests bench)
mkdir -p "$OUT_DIR"
want() { [[ " ${STEPS[*]} " == *" $1 "* ]]; }
summary=$OUT_DIR/summary.txt
note() { echo "$*" | tee -a "$summary"; }

# cuDNN matching our 9.19 headers lives in the PyTorch venv; the system one is 9.14.
CUDNN_DIR=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
CUBLAS_DIR=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH="${CUDNN_DIR:+$CUDNN_DIR:}${CUBLAS_DIR:+$CUBLAS_DIR:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH:$(ls -d /opt/nvidia/nsight-compute/* 2>/dev/null | tail -1)"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}

if [[ -x .devcarry/bin/ptxbench ]]; then
  PREFIX=$ROOT/.devcarry
  TESTS=$PREFIX/tests
else
  echo "gpu_check: no carried install (.devcarry); building on the device"
  cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    ${CUDNN_DIR:+-DPTXB_CUDNN_ROOT=$(dirname "$CUDNN_DIR")} >"$OUT_DIR/build.log" 2>&1 &&
    cmake --build build-device -j"$(nproc)" >>"$OUT_DIR/build.log" 2>&1 &&
    cmake --install build-device --prefix build-device/prefix >>"$OUT_DIR/build.log" 2>&1 ||
    { tail -40 "$OUT_DIR/build.log"; exit 1; }
  PREFIX=$ROOT/build-device/prefix
  TESTS=$ROOT/build-device
fi
BIN=$PREFIX/bin
LIBEXEC=$PREFIX/libexec/ptxbench
# Shared libraries the install carries (cpp-httplib), for the build-tree test binaries.
export LD_LIBRARY_PATH="$PREFIX/lib:$LD_LIBRARY_PATH"
export PTXB_SOURCE_DIR=$ROOT PTXB_TESTDATA_DIR=$ROOT/testdata PTXB_CLI_PATH=$BIN/ptxbench \
  PTXB_TESTING_CLI_PATH=$TESTS/ptxbench-testing \
  PTXB_RUNNER_PATH=$LIBEXEC/ptxbench-runner

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  echo "install prefix: $PREFIX   steps: ${STEPS[*]}"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
} | tee "$OUT_DIR/device.txt"
"$BIN/ptxbench" env --json >"$OUT_DIR/env.json" 2>&1
"$BIN/ptxbench" env | head -40

status=0
if want tests; then
  if [[ -x $TESTS/ptxbench_gpu_tests ]]; then
    "$TESTS/ptxbench_gpu_tests" --gtest_filter="$FILTER" --gtest_output="json:$OUT_DIR/gpu_tests.json" \
      >"$OUT_DIR/gpu_tests.log" 2>&1 || status=1
    note "tests ($FILTER): $(grep -E '^\[  (PASSED|FAILED) ' "$OUT_DIR/gpu_tests.log" | tr '\n' ' ')"
    grep -E "^\[  FAILED  \]|Failure|mismatch" "$OUT_DIR/gpu_tests.log" | head -40 | tee -a "$summary"
  else
    note "tests: no $TESTS/ptxbench_gpu_tests (a CUDA build with PTXB_BUILD_GPU_TESTS=ON)"
    status=1
  fi
fi

if want integrity; then
  # The sandbox-class exploits run again without the static checks when `eval` has the sandbox.
  SANDBOX=0
  "$BIN/ptxbench" eval --help 2>/dev/null | grep -q -- "--unsafe-no-sandbox" && SANDBOX=1
  # A canary secret: a scrubbed environment never lets it reach a result (env_api_key.cu).
  CANARY="sk-ptxb-canary-$(date +%s)-$$"
  OPENAI_API_KEY=$CANARY PTXB_INTEGRITY_SUITE=1 PTXB_INTEGRITY_CLI="$BIN/ptxbench" \
    PTXB_INTEGRITY_TESTING_CLI="$TESTS/ptxbench-testing" \
    PTXB_INTEGRITY_OUT="$OUT_DIR" PTXB_INTEGRITY_SANDBOX=$SANDBOX PTXB_INTEGRITY_CANARY="$CANARY" \
    PTXB_INTEGRITY_ONLY="$ONLY" PTXB_INTEGRITY_BUDGET_S="$BUDGET" PTXB_INTEGRITY_COMPILE=all \
    "$TESTS/ptxbench_tests" --gtest_filter='IntegrityManifest.EveryKernelCompiles*:IntegritySuiteOnGpu.*' \
    >"$OUT_DIR/integrity_suite.log" 2>&1 || status=1
  if [[ -f $OUT_DIR/integrity_results.md ]]; then cat "$OUT_DIR/integrity_results.md"; else tail -40 "$OUT_DIR/integrity_suite.log"; fi
  note "integrity (sandbox $SANDBOX, budget ${BUDGET}s): $(grep -E '^\[  (FAILED|PASSED|SKIPPED) ' "$OUT_DIR/integrity_suite.log" | tr '\n' ' ')"
fi

if want solutions; then
  W=$OUT_DIR/solutions && mkdir -p "$W"
  # Every rung file, and for the attention tasks its causal variant too (the same file with
  # PTXB_CAUSAL=1, rendered by scripts/solution_kernel.sh as the replay model submits it).
  default_specs=$(for f in solutions/*/rung*.cu; do
    t=${f#solutions/} && t=${t%%/*} && r=$(basename "$f" .cu)
    echo "$t:$r:11"
    [[ $t == mha_* ]] && echo "${t}_causal:$r:11"
  done)
  for spec in ${SOLUTION_SPECS:-$default_specs}; do
    IFS=: read -r task rung seed <<<"$spec"
    bash scripts/solution_kernel.sh "$BIN" "$task" "$rung" >"$W/${task}__${rung}.cu"
    "$BIN/ptxbench" eval "$W/${task}__${rung}.cu" --task "$task" --json --seed "$seed" \
      >"$W/${task}__${rung}__$seed.json" 2>"$W/${task}__${rung}__$seed.err"
    rc=$?
    note "solutions: $task $rung seed $seed rc=$rc"
    ((rc == 0)) || status=1
  done
  python3 bench/solutions_summary.py "$W" >"$OUT_DIR/solutions.md"
  cut -c1-220 "$OUT_DIR/solutions.md"
  tar czf "$OUT_DIR/solutions.tgz" -C "$OUT_DIR" solutions && rm -rf "$W"
fi

if want replay; then
  start=$(date +%s)
  "$BIN/ptxbench" run --model replay --suite paper-h100 --variants base --trajectories 1 --turns 2 \
    --out "$OUT_DIR/replay-run" >"$OUT_DIR/replay.log" 2>&1
  rc=$?
  note "replay: rc=$rc in $(($(date +%s) - start)) s"
  ((rc == 0)) || status=1
  tail -15 "$OUT_DIR/replay.log"
  tar czf "$OUT_DIR/replay-run.tgz" -C "$OUT_DIR" replay-run && rm -rf "$OUT_DIR/replay-run"
fi

if want bench; then
  BIN="$BIN" LIBEXEC="$LIBEXEC" TESTS="$TESTS" OUT_DIR="$OUT_DIR" bash bench/run_gpu_benchmarks.sh || status=1
  note "bench: done (${PTXB_BENCHMARKS:-eval solutions}: eval_bench.md, reference_solutions.md, service_gpu.md)"
fi

if want samples; then
  P=testdata/runner/gemm_selfcontained_small.json
  for v in ${SAMPLE_VARIANTS:-0}; do
    { echo "#define PTXB_TEST_VARIANT $v"; cat testdata/eval/gemm_variants.cu; } >"/tmp/variant_$v.cu"
    "$BIN/ptxbench" compile "/tmp/variant_$v.cu" --task gemm_n7168_k5120 --json >"$OUT_DIR/compile_$v.json" ||
      { note "samples: compile of variant $v failed"; status=1; continue; }
    so=$(python3 -c "import json,sys;a=json.load(open(sys.argv[1]))['artifact'];print(a['directory']+'/'+a['shared_object'])" "$OUT_DIR/compile_$v.json")
    ncu --clock-control none --profile-from-start off --page source --csv --print-source sass \
      --metrics inst_executed,thread_inst_executed_true "$LIBEXEC/ptxbench-runner" --self-contained \
      --so "$so" --params-json $P >"$OUT_DIR/ncu_$v.csv" 2>"$OUT_DIR/ncu_$v.err"
    note "samples: variant $v ncu rc=$? ($(grep -c . "$OUT_DIR/ncu_$v.csv") lines)"
    compute-sanitizer --tool memcheck --error-exitcode 9 --show-backtrace device \
      "$LIBEXEC/ptxbench-runner" --self-contained --so "$so" --params-json $P >"$OUT_DIR/memcheck_$v.txt" 2>&1
    note "samples: variant $v memcheck rc=$?"
  done
  # The device tool returns a few files per call: one archive.
  (cd "$OUT_DIR" && tar czf samples.tgz ncu_* memcheck_* compile_* && rm -f ncu_* memcheck_* compile_*)
fi
exit $status
