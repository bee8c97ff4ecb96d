#!/usr/bin/env bash
# The configurations of solutions/mha_with_lse_d128/rung3_tuned.cu on the H200, both masks
# (the causal task gets `#define PTXB_CAUSAL 1`), by bench/rung_sweep.sh (output
# $OUT_DIR/fwd_sweep.md, .jsonl, _raw.tgz). 12 configurations x 2 tasks x 1 seed = 24
# evaluations of 8-12 s: one device call of 4-5 minutes. The persistent configurations (a new
# cross-item barrier protocol) run last, so a hang costs only its SWEEP_TIMEOUT. The list
# (knobs: the rung's top comment):
#   base               rung 2's schedule (control; rung 2 measured 0.976x / 0.974x)
#   pin                the P·V wait kept below the softmax (rung 2's SASS waits before the exps)
#   pin_tree(_skip)    + 4-way max/sum partials; + skip O *= 1 when no row maximum moved
#   pin_o1/o2_...      + FA3's order: O rescale under this consumer's own Q·K^T (o2: pack too)
#   kv176/192_pts      FA3's 176-key tile (fewer per-tile overheads; S tail masked), 2 stages
#   st2_pts            2 stages at 128 keys (isolates the stage count from the tile size)
#   pts_pers(_dyn_hg8) persistent CTAs: next item's Q/K/V load under this item's tail/epilogue;
#                      causal: dynamic heaviest-first scheduler (hg8: 8-head L2 groups; the
#                      non-causal task gets the dynamic scheduler there instead of static)
#   kv176_pts_pers     the FA3-like combination
# SWEEP_CONFIGS, SWEEP_TASKS, SWEEP_SEEDS, SWEEP_FLAGS, SWEEP_TIMEOUT override
# (bench/rung_sweep.sh). Needs BIN (folder with ptxbench) and OUT_DIR; run from the repository
# root.
# The file's defaults are the winner (pts_pers_dyn_hg8); every configuration starts from rung 2's
# schedule ($R2) and sets its own knobs after it (rung_sweep.sh keeps a name's last value).
R2=PTXB_F_PIN=0,PTXB_F_TREE=0,PTXB_F_SKIP_RESCALE=0,PTXB_F_PERSISTENT=0,PTXB_F_DYNAMIC=PTXB_CAUSAL,PTXB_F_HEAD_GROUP=16
PTS=PTXB_F_PIN=1,PTXB_F_TREE=1,PTXB_F_SKIP_RESCALE=1
SWEEP_NAME=fwd_sweep SWEEP_SRC=solutions/mha_with_lse_d128/rung3_tuned.cu \
  SWEEP_TASKS=${SWEEP_TASKS:-mha_with_lse_d128 mha_with_lse_d128_causal} \
  SWEEP_CONFIGS=${SWEEP_CONFIGS:-"base:$R2;
pin:$R2,PTXB_F_PIN=1;
pin_tree:$R2,PTXB_F_PIN=1,PTXB_F_TREE=1;
pin_tree_skip:$R2,$PTS;
pin_o1_tree_skip:$R2,$PTS,PTXB_F_ORDER=1;
pin_o2_tree_skip:$R2,$PTS,PTXB_F_ORDER=2;
kv176_pts:$R2,PTXB_F_KV_TILE=176,PTXB_F_STAGES=2,$PTS;
kv192_pts:$R2,PTXB_F_KV_TILE=192,PTXB_F_STAGES=2,$PTS;
st2_pts:$R2,PTXB_F_STAGES=2,$PTS;
pts_pers:$R2,$PTS,PTXB_F_PERSISTENT=1;
pts_pers_dyn_hg8:$R2,$PTS,PTXB_F_PERSISTENT=1,PTXB_F_DYNAMIC=1,PTXB_F_HEAD_GROUP=8;
kv176_pts_pers:$R2,PTXB_F_KV_TILE=176,PTXB_F_STAGES=2,$PTS,PTXB_F_PERSISTENT=1"} \
  exec bash "$(dirname "$0")/rung_sweep.sh"
