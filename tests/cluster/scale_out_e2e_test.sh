#!/usr/bin/env bash
# `ptxbench run --executor` end to end, as a user runs it, with no GPU: a 12-trajectory replay
# plan (2 tasks x 6 trajectories x 3 turns, testdata/cluster/replay) judged by the fake
# evaluator (`ptxbench-testing run --test-fake-eval`, 250 ms per evaluation).
#   scale_out_e2e_test.sh local SOURCE_DIR TESTING_CLI
#       --executor local --gpus 0,1,2,3: 4 worker processes; the result equals a plain run's.
#   scale_out_e2e_test.sh slurm SOURCE_DIR TESTING_CLI
#       --executor slurm on a real Slurm (scripts/slurm_ci.sh): one job array of 4 tasks;
#       (a) the result equals a plain run's, (b) scancel of one array task mid-run, then the
#       same command again: only that shard is resubmitted and every turn is recorded once,
#       (c) `ptxbench status` at each step. Exit 77 (CTest: skipped) with a message when no
#       Slurm answers, unless PTXB_REQUIRE_SLURM=1 (CI), where that is a failure.
set -uo pipefail
MODE=${1:?usage: scale_out_e2e_test.sh local|slurm SOURCE_DIR TESTING_CLI}
SRC=${2:?source dir}
BIN=${3:?ptxbench-testing}
CHECK="python3 $SRC/tests/cluster/run_checks.py"
start=$SECONDS

fail() {
  echo "FAIL: $*"
  exit 1
}

if [[ $MODE == slurm ]]; then
  export SLURM_CONF=${SLURM_CONF:-${PTXB_SLURM_DIR:-/var/tmp/ptxb-slurm}/slurm.conf}
  if ! command -v sbatch >/dev/null || ! bash "$SRC/scripts/slurm_ci.sh" status; then
    why="no Slurm cluster answers (SLURM_CONF=$SLURM_CONF); start one with: bash scripts/slurm_ci.sh start"
    [[ ${PTXB_REQUIRE_SLURM:-0} == 1 ]] && fail "$why (PTXB_REQUIRE_SLURM=1)"
    echo "SKIPPED: $why"
    exit 77
  fi
fi

# Under /var/tmp, not a private /tmp: Slurm's tasks must see the same directory.
W=$(mktemp -d /var/tmp/ptxb-scale-out.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/ev-plain" "$W/ev-sharded"
PLAN=(--model "replay:$SRC/testdata/cluster/replay" --task gemm_n7168_k5120
  --task mha_with_lse_d128 --variants base --trajectories 6 --turns 3)

# The reference: the same plan in one process.
"$BIN" run "${PLAN[@]}" --out "$W/plain" --test-fake-eval "$W/ev-plain" >"$W/plain.out" 2>"$W/plain.err" ||
  fail "plain run: exit $? $(tail -3 "$W/plain.err")"
"$BIN" report "$W/plain" --json >"$W/report-plain.json" || fail "report of the plain run"

status_json() { "$BIN" status "$1" --json >"$W/status.json" || fail "ptxbench status $1"; }

if [[ $MODE == local ]]; then
  "$BIN" run "${PLAN[@]}" --out "$W/sharded" --executor local --gpus 0,1,2,3 \
    --test-fake-eval "$W/ev-sharded" >"$W/sharded.out" 2>"$W/sharded.err" ||
    fail "local executor: exit $? $(tail -5 "$W/sharded.err")"
  for i in 0 1 2 3; do
    grep -q "shard $i/4" "$W/sharded/shards/$i-of-4/local-1.log" ||
      fail "shard $i: no worker log naming its shard"
  done
  status_json "$W/sharded"
  $CHECK status "$W/status.json" complete=true turns_done=36 turns_remaining=0 shard_count=4 \
    0-of-4.state='"done"' 3-of-4.job='"local-1_3"' || exit 1
else
  ARGS=(--out "$W/sharded" --executor slurm --shards 4 --partition ci --time 10:00
    --array-parallel 4 --test-fake-eval "$W/ev-sharded")
  "$BIN" run "${PLAN[@]}" "${ARGS[@]}" >"$W/first.out" 2>"$W/first.err" &
  coordinator=$!
  # (c) right after submission: every shard queued or running, nothing done yet.
  for _ in $(seq 100); do [[ -f $W/sharded/shards/jobs.json ]] && break; sleep 0.1; done
  [[ -f $W/sharded/shards/jobs.json ]] || fail "no submission recorded: $(cat "$W/first.err")"
  job=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["id"])' \
    "$W/sharded/shards/jobs.json")
  status_json "$W/sharded"
  $CHECK status "$W/status.json" shard_count=4 turns_planned=36 complete=false \
    2-of-4.state=IN:queued,running 2-of-4.job="\"${job}_2\"" || exit 1
  # (b) scancel shard 2 once it has recorded a turn, long before its 9 turns are done.
  for _ in $(seq 300); do
    [[ -s $W/sharded/shards/2-of-4/turns.jsonl ]] && break
    sleep 0.05
  done
  [[ -s $W/sharded/shards/2-of-4/turns.jsonl ]] || fail "shard 2 recorded no turn"
  scancel "${job}_2" || fail "scancel ${job}_2"
  wait "$coordinator"
  rc=$?
  [[ $rc == 1 ]] || fail "the first run should end with exit 1 (a shard cut off), got $rc: $(tail -5 "$W/first.err")"
  grep -q "2-of-4: stopped (CANCELLED" "$W/first.err" || fail "no stopped shard named: $(tail -3 "$W/first.err")"
  # (c) after the cancel: shard 2 stopped as CANCELLED with turns left, the others done.
  status_json "$W/sharded"
  done2=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([s for s in d["shards"] if s["shard"]=="2-of-4"][0]["turns_done"])' "$W/status.json")
  ((done2 >= 1 && done2 < 9)) || fail "shard 2 has $done2 turns after the cancel (expected 1-8)"
  $CHECK status "$W/status.json" 2-of-4.state='"stopped"' 2-of-4.detail='~CANCELLED' \
    2-of-4.turns_remaining=$((9 - done2)) 0-of-4.state='"done"' 1-of-4.state='"done"' \
    3-of-4.state='"done"' turns_remaining=$((9 - done2)) complete=false || exit 1
  # The same command again: only shard 2 is submitted, and the run completes.
  "$BIN" run "${PLAN[@]}" "${ARGS[@]}" >"$W/second.out" 2>"$W/second.err" ||
    fail "rerun: exit $? $(tail -5 "$W/second.err")"
  grep -q "submitted 1 shard of 4 as slurm job .* (array indices 2)" "$W/second.err" ||
    fail "the rerun did not resubmit exactly shard 2: $(grep submitted "$W/second.err")"
  status_json "$W/sharded"
  $CHECK status "$W/status.json" complete=true turns_done=36 turns_remaining=0 eta_s=0.0 \
    2-of-4.state='"done"' 2-of-4.job='~_2' || exit 1
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f={}
for s in d["shards"]:
    for k,v in s["failures"].items(): f[k]=f.get(k,0)+v
want={"COMPILE_ERROR":6,"INCORRECT_NUMERICAL":6,"RUNTIME_ERROR":6}
assert f==want, f"failures {f}, expected {want}"
assert d["gpu_hours"] > 36*0.25/3600*0.9, d["gpu_hours"]
print("ok: failures by status", f, "and GPU-hours", round(d["gpu_hours"], 5))' "$W/status.json" || fail "status totals"
  # Never a finished turn evaluated twice: at most the one turn in flight at the cancel again.
  evals=$(wc -l <"$W/ev-sharded/evals.log")
  ((evals >= 36 && evals <= 37)) || fail "$evals evaluations for 36 turns (at most 37 allowed)"
  echo "ok: $evals evaluations for 36 turns"
fi

$CHECK no-duplicates "$W/sharded" 36 || exit 1
"$BIN" report "$W/sharded" --json >"$W/report-sharded.json" || fail "report of the sharded run"
$CHECK same-results "$W/plain" "$W/sharded" "$W/report-plain.json" "$W/report-sharded.json" || exit 1
echo "PASS: $MODE executor in $((SECONDS - start)) s"
