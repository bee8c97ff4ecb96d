#!/usr/bin/env bash
set -u
PREFIX=$PWD/.devcarry
source <(sed -n '/^CUDNN_DIR=/,/^export PTXBENCH_CACHE_DIR/p' scripts/gpu_check.sh)
export LD_LIBRARY_PATH="$PREFIX/lib:$LD_LIBRARY_PATH"
SOLUTION_SPECS="mha_with_lse_d64:rung2_warp_specialized:21 mha_with_lse_d64_causal:rung2_warp_specialized:21 mha_with_lse_d96:rung2_warp_specialized:21 mha_with_lse_d96_causal:rung2_warp_specialized:21 mha_bwd_d64:rung2_warp_specialized:21 mha_bwd_d64_causal:rung2_warp_specialized:21 mha_bwd_d96:rung2_warp_specialized:21 mha_bwd_d96_causal:rung2_warp_specialized:21" timeout 300 bash scripts/gpu_check.sh solutions > $OUT/sol.log 2>&1
AA_TASKS="gemm_n7168_k5120" AA_SEEDS="1 2 3 4 5 6 7 8 9 10" PTXB_BENCHMARKS=aa timeout 250 bash scripts/gpu_check.sh bench > $OUT/aa.log 2>&1
cd $OUT && tar czf aa.tgz aa_bench 2>/dev/null; rm -rf aa_bench; cat summary.txt
