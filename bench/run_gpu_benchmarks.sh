#!/usr/bin/env bash
# GPU benchmarks run by `scripts/gpu_check.sh bench` (BIN, LIBEXEC and OUT_DIR set there).
# PTXB_BENCHMARKS picks them (default "eval solutions"): eval (A/A and the evaluator's costs,
# about 4 minutes), solutions (every reference rung, three seeds: about 13 minutes) and aa (A/A
# fidelity per task and seed, bench/aa_bench.sh: AA_TASKS, AA_SEEDS; about 10 s per evaluation) and
# service (`ptxbench serve` on GPU 0: the paper tasks locally vs through the service, its
# overhead per GEMM evaluation, exploits and the replay through it, bench/service_gpu.sh; at most
# about 6 minutes), debug (the debug stage over testdata/debug's failure kernels, goldens and
# line checks, bench/debug_bench.sh; about 3 minutes), flashinfer (the GQA references,
# bench/flashinfer_bench.sh: FlashInfer 0.6.14 and plain CUDA latency and TFLOP/s on the three
# heldout-h100 GQA workloads with FlashInfer's plan and its check against the plain reference,
# then A/A evaluations of the three tasks; about 2 minutes; needs a build configured with
# -DPTXB_WITH_FLASHINFER=ON) and adapt (a small Fixit round: a scripted student of broken expert
# rungs, mine, repair by the expert rungs, reason, export; bench/adapt_round.sh, under 6 minutes),
# gemm_sweep (the configurations of solutions/gemm_n7168_k5120/rung4_tuned.cu, bench/gemm_sweep.sh;
# about 5 minutes) and fwd_sweep (those of solutions/mha_with_lse_d128/rung3_tuned.cu,
# bench/fwd_sweep.sh), bwd_sweep (those of solutions/mha_bwd_d128/rung3_fused_dq.cu,
# bench/bwd_sweep.sh; about 5 minutes) and ncu_passes (Nsight Compute's passes and wall time per group of the
# profile stage's metrics, bench/ncu_passes.sh; about 1 minute) and flashinfer_python (FlashInfer's own
# Python API on the GQA workloads, bench/flashinfer_python.sh; carried wheels, a few minutes) and
# profile_cost (the profile stage's cost and verdicts against its method before 2026-12-03 and
# against the fixed cost, bench/profile_cost.sh; about 5 minutes).
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0 # the service, debug, flashinfer and adapt checks fail the step (the others only measure)
for b in ${PTXB_BENCHMARKS:-eval solutions}; do
  case "$b" in
    eval) bash bench/eval_bench.sh ;;
    aa) bash bench/aa_bench.sh ;;
    solutions) bash bench/solutions_bench.sh ;;
    service) bash bench/service_gpu.sh || rc=1 ;;
    debug) bash bench/debug_bench.sh || rc=1 ;;
    flashinfer) bash bench/flashinfer_bench.sh || rc=1 ;;
    adapt) bash bench/adapt_round.sh || rc=1 ;;
    gemm_sweep) bash bench/gemm_sweep.sh ;;
    fwd_sweep) bash bench/fwd_sweep.sh ;;
    bwd_sweep) bash bench/bwd_sweep.sh ;;
    ncu_passes) bash bench/ncu_passes.sh "$OUT_DIR" ;;
    profile_cost) BIN="$BIN" OUT_DIR="$OUT_DIR" bash bench/profile_cost.sh ;;
    flashinfer_python) OUT_DIR=$OUT_DIR bash bench/flashinfer_python.sh || rc=1 ;;
    *) echo "run_gpu_benchmarks: unknown benchmark $b (eval, solutions, aa, service, debug, flashinfer, adapt, gemm_sweep, fwd_sweep, bwd_sweep, ncu_passes, flashinfer_python, profile_cost)" >&2; exit 2 ;;
  esac
done
exit $rc
