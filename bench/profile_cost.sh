#!/usr/bin/env bash
# The profile stage's cost and verdicts, this method against the one before it, in one run
# (timing-fidelity issue, "cheaper target-instruction check, same verdicts"): every entry is
# evaluated with the default profile stage (per-address counters from ncu's raw page, only the
# target kernels profiled) and with `--ncu-source-page` (the source page imported, every kernel
# profiled), alternating which goes first, PROFILE_REPS times. The fixed cost is the same stage
# on near-empty calls: a 1024^3 TMA + wgmma GEMM (the target path) and a SIMT one (no target
# family: work counters only), both of the integrity suite's tasks.
#   BIN=build OUT_DIR=/tmp bash bench/profile_cost.sh     (GPU, ncu on PATH; about 5 minutes)
# Writes $OUT_DIR/profile_cost/*.json and $OUT_DIR/profile_cost.md.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
W=$OUT_DIR/profile_cost && mkdir -p "$W/kernels"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
IT=testdata/integrity
# name  task  tasks-dir (- = built in)  source (rung name or file)
ENTRIES=${PROFILE_ENTRIES:-"
fixed_wgmma_1024 integrity_gemm_1024 $IT/tasks $IT/legit/tensor_map_cached.cu
gemm gemm_n7168_k5120 - rung3_cluster_multicast
fwd mha_with_lse_d128 - rung2_warp_specialized
bwd_rung3 mha_bwd_d128 - rung3_fused_dq
bwd_causal_rung3 mha_bwd_d128_causal - rung3_fused_dq
bwd_rung2 mha_bwd_d128 - rung2_warp_specialized
fwd_causal mha_with_lse_d128_causal - rung2_warp_specialized
profile_mode_switch integrity_gemm_1024 $IT/tasks $IT/exploits/profile_mode_switch.cu
skip_k_loose integrity_gemm_1024_loose $IT/tasks $IT/exploits/skip_k_loose.cu
fixed_simt_1024 integrity_gemm_1024 $IT/tasks $IT/legit/simt_gemm_work.cu
"}
REPS=${PROFILE_REPS:-2}
eval_one() {  # name task dir file mode rep
  local dir_flag=() mode_flag=()
  [[ $3 != - ]] && dir_flag=(--tasks-dir "$3")
  [[ $5 == source_page ]] && mode_flag=(--ncu-source-page)
  # The first repetition keeps ncu's pages (eval --save-profile) for inspection.
  (($6 == 1)) && mode_flag+=(--save-profile "$W/pages/$1__$5")
  local t0 t1 rc
  t0=$(date +%s%N)
  "$BIN/ptxbench" "${dir_flag[@]}" eval "$4" --task "$2" --json --seed $((20 + $6)) \
    "${mode_flag[@]}" >"$W/$1__$5__$6.json" 2>"$W/$1__$5__$6.err"
  rc=$?
  t1=$(date +%s%N)
  echo "$1 $5 $6 rc=$rc wall_ms=$(((t1 - t0) / 1000000))" >>"$W/runs.txt"
}
# Repetitions outermost, so that a run cut short still has every entry once.
for ((rep = 1; rep <= REPS; rep++)); do
  echo "$ENTRIES" | while read -r name task dir source; do
    [[ -z $name ]] && continue
    file=$source
    if [[ $source != *.cu ]]; then
      file=$W/kernels/$name.cu
      [[ -s $file ]] || bash scripts/solution_kernel.sh "$BIN" "$task" "$source" >"$file" || continue
    fi
    if ((rep == 1)); then  # compile once, so that no evaluation below pays a cold compile
      dir_flag=()
      [[ $dir != - ]] && dir_flag=(--tasks-dir "$dir")
      "$BIN/ptxbench" "${dir_flag[@]}" compile "$file" --task "$task" >/dev/null 2>&1
    fi
    if ((rep % 2)); then order="raw_page source_page"; else order="source_page raw_page"; fi
    for mode in $order; do eval_one "$name" "$task" "$dir" "$file" "$mode" "$rep"; done
  done
done
python3 bench/profile_cost_summary.py "$W" | tee "$OUT_DIR/profile_cost.md"
