#!/usr/bin/env bash
# device call 1: debug bench, issue-20 replay pair, hints ablation, gpu tests
set -u
T0=$(date +%s)
left() { echo $((570 - ($(date +%s) - T0))); }
O=$OUT
PREFIX=$PWD/.devcarry
source <(sed -n '/^CUDNN_DIR=/,/^export PTXBENCH_CACHE_DIR/p' scripts/gpu_check.sh)
BIN=$PREFIX/bin; LIBEXEC=$PREFIX/libexec/ptxbench; TESTS=$PREFIX/tests
export LD_LIBRARY_PATH="$PREFIX/lib:$LD_LIBRARY_PATH"
export PTXB_SOURCE_DIR=$PWD PTXB_TESTDATA_DIR=$PWD/testdata PTXB_CLI_PATH=$BIN/ptxbench PTXB_TESTING_CLI_PATH=$TESTS/ptxbench-testing PTXB_RUNNER_PATH=$LIBEXEC/ptxbench-runner
S=$O/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv | tee $S
date -u | tee -a $S
# 1. debug bench
OUT_DIR=$O BIN=$BIN timeout 150 bash bench/debug_bench.sh > $O/debug_bench.log 2>&1; echo "debug rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $S
# 2. replay pair
R=$O/runs; mkdir -p $R
s=$(date +%s); timeout 200 $BIN/ptxbench run --model replay --suite paper-h100 --variants base --trajectories 1 --turns 2 --out $R/replay-plain > $O/replay_plain.log 2>&1; echo "plain rc=$? $(( $(date +%s)-s ))s" | tee -a $S
s=$(date +%s); timeout 200 $BIN/ptxbench run --model replay --suite paper-h100 --variants base --trajectories 1 --turns 2 --executor local --gpus 0 --out $R/replay-gpu0 > $O/replay_gpu0.log 2>&1; echo "gpu0 rc=$? $(( $(date +%s)-s ))s" | tee -a $S
python3 tests/cluster/run_checks.py same-verdicts $R/replay-plain $R/replay-gpu0 > $O/same_verdicts.txt 2>&1; echo "same-verdicts rc=$?" | tee -a $S
# 3. hints ablation
if (( $(left) > 150 )); then
s=$(date +%s); timeout $(( $(left) - 120 )) $BIN/ptxbench run --model replay --suite paper-h100 --variants base --trajectories 1 --turns 2 --profiler-hints --out $R/replay-hints > $O/replay_hints.log 2>&1; echo "hints rc=$? $(( $(date +%s)-s ))s" | tee -a $S
fi
# 4. gpu tests
if (( $(left) > 60 )); then
timeout $(( $(left) - 15 )) $TESTS/ptxbench_gpu_tests --gtest_filter='-SolutionsGpu.*' > $O/gpu_tests.log 2>&1; echo "gpu tests rc=$? at $(( $(date +%s)-T0 ))s" | tee -a $S
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" $O/gpu_tests.log | tee -a $S
fi
cd $O && tar czf out.tgz debug runs *.log same_verdicts.txt 2>/dev/null; rm -rf debug runs
cat $S
