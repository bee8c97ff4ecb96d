#!/usr/bin/env bash
# Writes the scripted student of the adaptation round into DEST (bench/adapt_round.sh): the
# replay answers (testdata/adapt/student/replay.json) and the four broken kernels, each an
# expert rung-1 solution with one edit (testdata/adapt/student/README.md says what each breaks
# and why). The edits are applied here, not committed as copies, so the students follow the
# rungs; an edit that no longer applies to its rung (or applies to more than one line) stops
# the round instead of handing the teacher a kernel that is not broken.
#   bench/adapt_student.sh DEST
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:?usage: bench/adapt_student.sh DEST}
G=solutions/gemm_n7168_k5120/rung1_tma_wgmma.cu
M=solutions/mha_with_lse_d128/rung1_tma_wgmma.cu
mkdir -p "$D"
cp testdata/adapt/student/replay.json "$D/"

# variant SOURCE OUT SED_EXPR LINES: OUT = SOURCE edited by SED_EXPR, which must change exactly
# LINES diff lines (a substitution: 2, a deletion: 1).
variant() {
  local src=$1 out=$2 expr=$3 lines=$4 changed
  sed "$expr" "$src" >"$D/$out"
  changed=$(diff "$src" "$D/$out" | grep -c '^[<>]' || true)
  if [[ $changed != "$lines" ]]; then
    echo "adapt_student: the edit for $out changes $changed lines of $src, expected $lines" >&2
    exit 1
  fi
}
variant "$G" gemm_wrong_swizzle.cu \
  's|make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem_b)|make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k64B>(smem_b)|' 2
variant "$G" gemm_off_by_one_tile.cu \
  's|  for (int kt = 0; kt < kKTiles; ++kt) {|  for (int kt = 0; kt < kKTiles - 1; ++kt) {|' 2
variant "$M" mha_missing_fence.cu \
  '/ptxb::wgmma_fence();  \/\/ O (rescaled) and P were written by ordinary instructions/d' 1
variant "$M" mha_unscaled_lse.cu \
  's|lse\[h\] = (m_run\[h\] + log2f(l)) \* kLn2;|lse[h] = m_run[h] + log2f(l);|' 2
