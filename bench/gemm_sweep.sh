#!/usr/bin/env bash
# The configurations of solutions/gemm_n7168_k5120/rung4_tuned.cu on the H200, by
# bench/rung_sweep.sh (output $OUT_DIR/gemm_sweep.md, .jsonl, _raw.tgz). Seeds 31 and 32;
# `base` runs first and last (`base2`) to show the reference's drift within the call. About
# 8-12 s per evaluation: 11 x 2 takes 4-5 minutes. Keep the winner as the file's defaults.
# Why each (the rung's top comment has the details):
#   base        rung 3's choices (control);  base2: the same again at the end (drift)
#   pwcta       producer waits on empty[] at CTA scope: no CCTL.IVALL per k-tile
#   s3          3 stages (cost of the shallower pipeline alone)
#   s3e4        3 stages + 4 staging boxes per warp: the epilogue never waits on a TMA store
#   s3e4pw      s3e4 + pwcta
#   skew1k/3k   consumer warpgroup 1 starts 1 / 3 us late: epilogues of the two warpgroups
#               overlap the other's main loop (pingpong-like); the lead is bounded by the ring
#   pwskew1k    pwcta + skew1k
#   alongN      raster groups of 8 cluster columns (B panel reuse) instead of 8 cluster rows
#   s3e4pwskew  s3e4 + pwcta + skew1k
# SWEEP_CONFIGS, SWEEP_SEEDS, SWEEP_FLAGS, SWEEP_TIMEOUT override (bench/rung_sweep.sh).
# Needs BIN (folder with ptxbench) and OUT_DIR; run from the repository root.
SWEEP_NAME=gemm_sweep SWEEP_SRC=solutions/gemm_n7168_k5120/rung4_tuned.cu \
  SWEEP_TASKS=gemm_n7168_k5120 SWEEP_SEEDS=${SWEEP_SEEDS:-31 32} \
  SWEEP_CONFIGS=${SWEEP_CONFIGS:-"base:;
pwcta:PTXB_G_PRODUCER_WAIT_CTA=1;
s3:PTXB_G_STAGES=3;
s3e4:PTXB_G_STAGES=3,PTXB_G_EPI_BOXES=4;
s3e4pw:PTXB_G_STAGES=3,PTXB_G_EPI_BOXES=4,PTXB_G_PRODUCER_WAIT_CTA=1;
skew1k:PTXB_G_SKEW_NS=1000;
skew3k:PTXB_G_SKEW_NS=3000;
pwskew1k:PTXB_G_PRODUCER_WAIT_CTA=1,PTXB_G_SKEW_NS=1000;
alongN:PTXB_G_RASTER_ALONG_N=1;
s3e4pwskew:PTXB_G_STAGES=3,PTXB_G_EPI_BOXES=4,PTXB_G_PRODUCER_WAIT_CTA=1,PTXB_G_SKEW_NS=1000;
base2:"} exec bash "$(dirname "$0")/rung_sweep.sh"
