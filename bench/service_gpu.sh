#!/usr/bin/env bash
# The evaluation service on the H200 (docs/service.md), run by bench/run_gpu_benchmarks.sh as
# PTXB_BENCHMARKS=service (`PTXB_BENCHMARKS=service bash scripts/gpu_check.sh bench`):
#   1. `ptxbench serve` on loopback with GPU 0 (no canary: nothing else may time on the GPU
#      while the local evaluations below run; one job at a time, everything here is sequential);
#   2. the expert solution of each of the five paper tasks (`ptxbench tasks solution TASK`, the
#      replay's last rung) evaluated locally (`ptxbench eval`) and through the service
#      (`ptxbench eval --remote`, the compile split), same seed: status equal, speedups within
#      1 %;
#   3. the service overhead per GEMM evaluation: 3 more local/remote pairs of the GEMM solution
#      (compile caches warm after step 2), (remote wall - local wall) / local wall; target < 2 %;
#   4. three exploits of the integrity suite (forge_channel_times, device_hang, orphan_daemon)
#      through the service: verdicts as testdata/integrity/expected.json says, and /v1/health
#      still ok with every worker serving afterwards;
#   5. the README's replay run through the service (`ptxbench run --evaluator URL`).
# Writes $OUT_DIR/service_gpu.md and service_gpu.json and prints the summary. A time budget
# ($PTXB_SERVICE_BUDGET seconds, default 330) skips what would not fit, and says so.
#
# Needs BIN (the install prefix's bin/) and OUT_DIR. Without a GPU: PTXB_SERVICE_DRY=1 with
# PTXB_SERVICE_SERVE=path/to/ptxbench-testing runs the same steps against fake GPU workers
# (serve --test-fake-workers) to check the plumbing and the report; local evaluations then stop
# after the compile (exit 3) and are not compared. PTXB_SERVICE_TASKS overrides the task list.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
W=$OUT_DIR/service_gpu && rm -rf "$W" && mkdir -p "$W"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
unset PTXBENCH_SERVICE_TOKEN # the service below runs without tokens (loopback only)
BUDGET=${PTXB_SERVICE_BUDGET:-330}
DRY=${PTXB_SERVICE_DRY:-0}
SERVE_BIN=${PTXB_SERVICE_SERVE:-$BIN/ptxbench}
read -r -a TASKS <<<"${PTXB_SERVICE_TASKS:-gemm_n7168_k5120 mha_with_lse_d128 mha_with_lse_d128_causal mha_bwd_d128 mha_bwd_d128_causal}"
INTEGRITY=testdata/integrity
EXPLOITS=(forge_channel_times device_hang orphan_daemon)
START=$(date +%s)
DEADLINE=$((START + BUDGET))
LOG=$W/evals.jsonl # one line per evaluation: step, task, where, seed, rc, wall, the result file
: >"$LOG"

left() { echo $((DEADLINE - $(date +%s))); }
skip() { # STEP WHY: recorded in the report
  echo "{\"step\": \"$1\", \"skipped\": \"$2\"}" >>"$LOG"
  echo "service_gpu: $1 skipped: $2"
}

# One evaluation: STEP TASK WHERE(local|remote) SEED KERNEL [eval options...]; its JSON result in
# $W/STEP__TASK__WHERE__SEED.json, its wall time (the whole command, compile included) logged.
eval_once() {
  local step=$1 task=$2 where=$3 seed=$4 kernel=$5
  shift 5
  local out=$W/${step}__${task}__${where}__${seed}
  local remote=()
  [[ $where == remote ]] && remote=(--remote "$URL")
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout 300 "$BIN/ptxbench" --tasks-dir "$INTEGRITY/tasks" eval "$kernel" --task "$task" \
    --seed "$seed" --json "${remote[@]}" "$@" >"$out.json" 2>"$out.err"
  rc=$?
  t1=$(date +%s.%N)
  printf '{"step": "%s", "task": "%s", "where": "%s", "seed": %s, "rc": %s, "wall_s": %s, "file": "%s"}\n' \
    "$step" "$task" "$where" "$seed" "$rc" "$(awk "BEGIN { print $t1 - $t0 }")" "$(basename "$out").json" >>"$LOG"
}

# ---- 1. the service ----
SERVE_ARGS=(--tasks-dir "$INTEGRITY/tasks" serve --listen 127.0.0.1:0 --gpus 0 --db "$W/serve.db" --no-canary)
((DRY)) && SERVE_ARGS+=(--test-fake-workers "$W")
"$SERVE_BIN" "${SERVE_ARGS[@]}" >"$W/serve.out" 2>"$W/serve.err" &
SERVE_PID=$!
trap 'kill $SERVE_PID 2>/dev/null; wait $SERVE_PID 2>/dev/null' EXIT
URL=""
for _ in $(seq 1 300); do
  URL=$(grep -o 'http://[0-9.:]*' "$W/serve.out" 2>/dev/null | head -1)
  [[ -n $URL ]] && break
  kill -0 $SERVE_PID 2>/dev/null || break
  sleep 0.1
done
if [[ -z $URL ]]; then
  echo "service_gpu: ptxbench serve did not start:" >&2
  tail -20 "$W/serve.err" >&2
  exit 1
fi
echo "service_gpu: service at $URL"

# ---- 2. the five paper tasks, locally and through the service ----
K=$W/kernels && mkdir -p "$K"
for task in "${TASKS[@]}"; do
  "$BIN/ptxbench" tasks solution "$task" >"$K/$task.cu" || { skip "paper:$task" "no solution"; continue; }
  if (($(left) < 60)); then skip "paper:$task" "time budget"; continue; fi
  eval_once paper "$task" local 11 "$K/$task.cu"
  eval_once paper "$task" remote 11 "$K/$task.cu"
done

# ---- 3. service overhead per GEMM evaluation ----
for seed in 21 22 23; do
  if (($(left) < 45)); then skip "overhead:$seed" "time budget"; continue; fi
  eval_once overhead gemm_n7168_k5120 local "$seed" "$K/gemm_n7168_k5120.cu"
  eval_once overhead gemm_n7168_k5120 remote "$seed" "$K/gemm_n7168_k5120.cu"
done

# ---- 4. exploits through the service, then its health ----
for id in "${EXPLOITS[@]}"; do
  if (($(left) < 40)); then skip "exploit:$id" "time budget"; continue; fi
  # The suite's own flags for the case (--no-ncu for these three).
  flags=$(python3 -c "import json,sys;print(' '.join(next(e for e in json.load(open(sys.argv[1]))['entries'] if e['id']==sys.argv[2]).get('eval_flags',[])))" "$INTEGRITY/expected.json" "$id")
  # shellcheck disable=SC2086
  eval_once exploit:$id integrity_gemm_1024 remote 11 "$INTEGRITY/exploits/$id.cu" $flags
done
curl -s --max-time 10 "$URL/v1/health" >"$W/health_after_exploits.json" || echo '{}' >"$W/health_after_exploits.json"

# ---- 5. the README's replay run through the service ----
if (($(left) < 60)); then
  skip replay "time budget"
else
  t0=$(date +%s.%N)
  timeout "$(left)" "$BIN/ptxbench" run --model replay --suite paper-h100 --variants base \
    --trajectories 1 --turns 2 --out "$W/replay-run" --evaluator "$URL" >"$W/replay.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  printf '{"step": "replay", "rc": %s, "wall_s": %s, "start": %s}\n' "$rc" "$(awk "BEGIN { print $t1 - $t0 }")" "$t0" >>"$LOG"
fi
curl -s --max-time 10 "$URL/v1/jobs?limit=1000" >"$W/jobs.json" || true

kill $SERVE_PID 2>/dev/null
wait $SERVE_PID 2>/dev/null
trap - EXIT
python3 bench/service_gpu_summary.py "$W" "$INTEGRITY/expected.json" "$DRY" "$(($(date +%s) - START))" \
  "$OUT_DIR/service_gpu.json" >"$OUT_DIR/service_gpu.md"
rc=$?
cat "$OUT_DIR/service_gpu.md"
tar czf "$OUT_DIR/service_gpu.tgz" -C "$OUT_DIR" service_gpu 2>/dev/null && rm -rf "$W"
exit $rc
