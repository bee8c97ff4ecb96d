#!/usr/bin/env bash
# The configurations of solutions/mha_bwd_d128/rung3_fused_dq.cu on the H200, both masks (the
# causal task gets `#define PTXB_CAUSAL 1`), by bench/rung_sweep.sh (output
# $OUT_DIR/bwd_sweep.md, .jsonl, _raw.tgz). The rung includes bwd_common.cuh, so it is rendered
# first (`ptxbench tasks solution`, headers inlined) and the sweep prepends its defines to that.
# 15 configurations x 2 tasks x 2 seeds: about 10 minutes in one device call. Every
# configuration sets all eight knobs from the first version's choices ($V1), so the list means
# the same whatever the file's defaults are. The knobs (the rung's top comment):
#   base        3 stages (causal 2), memset, bulk reduces staged at the end of each step
#   zero        the preprocess kernel zeroes the dQ buffer instead of cudaMemsetAsync
#   red         dQ partials added from registers (red.global.add.v2.f32), no staging
#   late1/late2 staging of step n's partial after step n+1's S^T and dP^T / S^T are issued
#   st2         2 stages (non-causal; the causal task has 2 already)
#   late2_zero_st2  2 stages, zeroing in the preprocess, staging under S^T
#   rot1/rot2   + non-causal key tile k starting at query tile k / 2k (rot1: the causal defaults)
#   rot1_lastconv  + the last warp to add into a dQ region converts it (no convert kernel)
#   defer       + the non-causal dQ product a step late, behind an mbarrier instead of a named
#               barrier (four dS buffers); defer_skew: + consumer 1 starting half a step late;
#               defer_rot0: defer without the rotation (defer: the file's defaults)
# SWEEP_CONFIGS, SWEEP_TASKS, SWEEP_SEEDS, SWEEP_FLAGS, SWEEP_TIMEOUT override. Needs BIN (the
# folder with ptxbench) and OUT_DIR; run from the repository root.
set -euo pipefail
RENDERED=${OUT_DIR:?}/bwd_sweep_rung3.cu
"${BIN:?}/ptxbench" tasks solution mha_bwd_d128 --rung rung3_fused_dq --replay-dir "$PWD/solutions" \
  >"$RENDERED"
V1="PTXB_B_STAGES=(PTXB_CAUSAL?2:3),PTXB_B_ZERO=0,PTXB_B_RED=0,PTXB_B_LATE_STAGE=0,PTXB_B_ROTATE=0,PTXB_B_LAST_CONVERTS=0,PTXB_B_DEFER=0,PTXB_B_SKEW=0"
# The non-causal task's deferred dQ product (PTXB_B_DEFER, PTXB_B_SKEW) has no causal build: on
# the causal task these configurations keep the named barrier.
DEFER="PTXB_B_DEFER=(!PTXB_CAUSAL)"
SWEEP_NAME=bwd_sweep SWEEP_SRC=$RENDERED \
  SWEEP_TASKS=${SWEEP_TASKS:-mha_bwd_d128 mha_bwd_d128_causal} \
  SWEEP_SEEDS=${SWEEP_SEEDS:-71 72} \
  SWEEP_CONFIGS=${SWEEP_CONFIGS:-"base:$V1;
zero:$V1,PTXB_B_ZERO=1;
red:$V1,PTXB_B_RED=1;
late1:$V1,PTXB_B_LATE_STAGE=1;
late2:$V1,PTXB_B_LATE_STAGE=2;
late2_zero:$V1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1;
red_late2_zero:$V1,PTXB_B_RED=1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1;
st2:$V1,PTXB_B_STAGES=2;
late2_zero_st2:$V1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1,PTXB_B_STAGES=2;
rot1:$V1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1,PTXB_B_STAGES=2,PTXB_B_ROTATE=1;
rot2:$V1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1,PTXB_B_STAGES=2,PTXB_B_ROTATE=2;
rot1_lastconv:$V1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1,PTXB_B_STAGES=2,PTXB_B_ROTATE=1,PTXB_B_LAST_CONVERTS=1;
defer:$V1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1,PTXB_B_STAGES=2,PTXB_B_ROTATE=1,$DEFER;
defer_skew:$V1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1,PTXB_B_STAGES=2,PTXB_B_ROTATE=1,$DEFER,PTXB_B_SKEW=(!PTXB_CAUSAL);
defer_rot0:$V1,PTXB_B_LATE_STAGE=2,PTXB_B_ZERO=1,PTXB_B_STAGES=2,PTXB_B_ROTATE=0,$DEFER"} \
  exec bash "$(dirname "$0")/rung_sweep.sh"
