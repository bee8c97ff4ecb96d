#!/usr/bin/env bash
# What each group of the profile stage's metrics costs (timing-fidelity issue, "cheaper
# target-instruction check"): Nsight Compute's pass count and wall time per metric set, on a
# probe of three ~2 ms kernels profiled per run (launch-skip 30, launch-count 3, the shape of
# a backward call). The metric sets are the profile stage's own (src/supervisor/profile_plan.cc):
# the source counters, the kernel time and the work counters (src/analysis/ncu_work.cc), and
# that set minus one group at a time. Two repetitions; the first run of each may include ncu's
# own cold start.
#   bash bench/ncu_passes.sh [OUT_DIR]     (needs nvcc and ncu on PATH; about 60 s on an H200)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT_DIR:-/tmp}}
W=$(mktemp -d)
nvcc -O3 -arch=sm_90a -o "$W/probe" bench/ncu_passes/probe.cu || exit 1
TENSOR=sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp16_dst_fp32.sum,sm__ops_path_tensor_src_fp16_dst_fp16.sum,sm__ops_path_tensor_src_tf32_dst_fp32.sum,sm__ops_path_tensor_src_fp8_dst_fp32.sum
FMA=smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_hfma_pred_on.sum
DRAM=dram__bytes_read.sum,dram__bytes_write.sum
TIME=gpu__time_duration.sum
SOURCE=inst_executed,thread_inst_executed_true
run() {
  local name=$1 metrics=$2 count=${3:-3}
  local t0 t1
  t0=$(date +%s%N)
  ncu --clock-control none --launch-skip 30 --launch-count "$count" --metrics "$metrics" \
    --export "$W/r_$name" --force-overwrite "$W/probe" >"$W/log" 2>&1
  t1=$(date +%s%N)
  echo "| $name | $count | $(grep -o '[0-9]* pass' "$W/log" | head -1) | $(((t1 - t0) / 1000000)) |"
}
{
  echo "| metric set | kernels | passes per kernel | wall ms |"
  echo "|---|---|---|---|"
  for rep in 1 2; do
    run full "$SOURCE,$TIME,$TENSOR,$FMA,$DRAM"
    run full_one_kernel "$SOURCE,$TIME,$TENSOR,$FMA,$DRAM" 1
    run without_source "$TIME,$TENSOR,$FMA,$DRAM"
    run source_and_time "$SOURCE,$TIME"
    run time_only "$TIME"
    run without_sass_fma "$SOURCE,$TIME,$TENSOR,$DRAM"
    run without_dram "$SOURCE,$TIME,$TENSOR,$FMA"
    # The verdict reads thread_inst_executed_true only (inst_executed is informational).
    run predicate_true_only "thread_inst_executed_true,$TIME,$TENSOR,$FMA,$DRAM"
    run predicate_true_no_sass_fma "thread_inst_executed_true,$TIME,$TENSOR,$DRAM"
    run predicate_true_and_time "thread_inst_executed_true,$TIME"
  done
  # The report's two imports (the stage runs them side by side), and the source page of one
  # kernel of three (an import-time --kernel-name filter).
  ncu --clock-control none --launch-skip 30 --launch-count 3 \
    --metrics "$SOURCE,$TIME,$TENSOR,$FMA,$DRAM" --export "$W/imp" --force-overwrite \
    "$W/probe" >/dev/null 2>&1
  imp() {
    local name=$1 t0 t1 s
    shift
    t0=$(date +%s%N)
    "$@" >"$W/imp.out" 2>&1
    s=$?
    t1=$(date +%s%N)
    echo "| import: $name | $(wc -l <"$W/imp.out") lines | exit $s | $(((t1 - t0) / 1000000)) |"
  }
  for rep in 1 2; do
    imp source ncu --import "$W/imp.ncu-rep" --page source --csv --print-source sass
    imp raw ncu --import "$W/imp.ncu-rep" --page raw --csv --print-units base
    imp source_one_kernel ncu --import "$W/imp.ncu-rep" --page source --csv --print-source sass \
      --kernel-name-base mangled --kernel-name 'regex:^_Z4workILi2EEvPfi$'
    # A filter that matches nothing: the import's own start-up.
    imp source_no_kernel ncu --import "$W/imp.ncu-rep" --page source --csv --print-source sass \
      --kernel-name-base mangled --kernel-name 'regex:^no_such_kernel$'
  done
} | tee "$OUT_DIR/ncu_passes.md"
rm -rf "$W"
