#!/usr/bin/env bash
# A small Fixit round on the H200 (docs/adaptation.md "The H200 round"), run by
# bench/run_gpu_benchmarks.sh with PTXB_BENCHMARKS=adapt
# (`PTXB_BENCHMARKS=adapt bash scripts/gpu_check.sh bench`):
#   1. student run   `replay:` over the broken variants of the expert rungs that
#                    bench/adapt_student.sh writes (testdata/adapt/student/README.md),
#                    2 tasks × 1 trajectory × 2 turns
#   2. fixit mine    every failing turn
#   3. fixit repair  teacher `replay` over solutions/ (the expert rungs), 2 turns; each kept
#                    repair is verified again by the real evaluator on fresh inputs
#   4. fixit reason  the scripted rationale teacher bench/adapt_teacher.py on loopback
#   5. fixit export  chat-jsonl and four-part, with their manifests
# Everything lands under $OUT_DIR/adapt/ (records, manifests, the logs of each step, and
# summary.md with the counts). About 12 evaluations: 2-3 minutes on an H200.
# Without a GPU (a CPU dry run: BIN=build OUT_DIR=/tmp/x bash bench/adapt_round.sh, about
# 15 s) every evaluation is gpu_skipped (INFRA_ERROR, never mined), so nothing is mined: the
# script says so, expects `repair` to refuse (exit 2), and still runs reason and export on the
# empty set, which checks the commands, flags, files and the PTX dedup's compiles end to end.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:?set BIN to the folder with ptxbench} OUT_DIR=${OUT_DIR:?set OUT_DIR}
W=$OUT_DIR/adapt && rm -rf "$W" && mkdir -p "$W"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
PTXB=$BIN/ptxbench
START=$(date +%s)
rc=0
summary=$W/summary.md
note() { echo "adapt_round: $*" | tee -a "$summary"; }
step() {  # step NAME CMD...: runs CMD, its stdout/stderr in $W/NAME.{out,err}, notes the exit
  local name=$1 status
  shift
  "$@" >"$W/$name.out" 2>"$W/$name.err"
  status=$?
  note "$name: exit $status ($(($(date +%s) - START)) s): $(tail -3 "$W/$name.out" | tr '\n' ' ')"
  ((status == 0)) || { tail -5 "$W/$name.err" | tee -a "$summary"; }
  return $status
}

bash bench/adapt_student.sh "$W/student-kernels" || exit 1
step student "$PTXB" run --model "replay:$W/student-kernels" --task gemm_n7168_k5120 \
  --task mha_with_lse_d128 --variants base --trajectories 1 --turns 2 --out "$W/student"
student_rc=$?  # 3: turns were gpu_skipped (checked below)
# gpu_skipped turns: the evaluator compiled the kernels but had no GPU to run them on.
skipped=$(grep -c '"reason":"gpu_skipped"' "$W/student/turns.jsonl" 2>/dev/null)
if ((${skipped:-0} > 0)); then
  note "NO GPU: ${skipped} student turns are gpu_skipped (compiled, not run); nothing fails, so" \
    "nothing is mined and repair is refused; the steps below run on the empty set (a dry run)"
  dry=1
else
  dry=0
  ((student_rc == 0)) || rc=1
fi

step mine "$PTXB" fixit mine "$W/student" --out "$W/fixit" || rc=1
# The teacher answers turn 2 of solutions/replay.json (the failing kernel is its turn 1 in a
# repair conversation): the fastest expert rung of each task.
if ((dry)); then
  step repair "$PTXB" fixit repair --work "$W/fixit" --teacher replay --turns 2 ||
    note "repair refused without a GPU, as expected"
  printf '' >"$W/fixit/repairs.jsonl"  # an empty log: nothing kept, so reason/export run empty
else
  step repair "$PTXB" fixit repair --work "$W/fixit" --teacher replay --turns 2 --json || rc=1
fi

port_file=$W/teacher.port
python3 bench/adapt_teacher.py "$port_file" &
teacher_pid=$!
for _ in $(seq 50); do [[ -s $port_file ]] && break; sleep 0.1; done
if [[ -s $port_file ]]; then
  step reason "$PTXB" fixit reason --work "$W/fixit" --json \
    --teacher "openai:adapt-teacher@http://127.0.0.1:$(cat "$port_file")/v1" || rc=1
else
  note "reason: the scripted teacher did not start"
  rc=1
fi
kill "$teacher_pid" 2>/dev/null
wait "$teacher_pid" 2>/dev/null

step export "$PTXB" fixit export --work "$W/fixit" --out "$W/fixit.jsonl" --json || rc=1
# Leakage control, shown on a run that overlaps the training data on purpose: with the student's
# own run as the held-out test run, every row's failing kernel is a test kernel, so the
# normalized-PTX dedup must drop every row (a check of the dedup, not records to keep).
step leakage_demo "$PTXB" fixit export --work "$W/fixit" --out "$W/leakage-demo.jsonl" --json \
  --heldout-run "$W/student" --ptx-dedup || rc=1
step export_four_part "$PTXB" fixit export --work "$W/fixit" --format four-part \
  --out "$W/fixit.four-part.jsonl" --json || rc=1
cp "$W/fixit/mine-manifest.json" "$W/fixit/repairs.jsonl" "$W/" 2>/dev/null
[[ -f $W/fixit/rationales.jsonl ]] && cp "$W/fixit/rationales.jsonl" "$W/"
note "done in $(($(date +%s) - START)) s; records: $(wc -l <"$W/fixit.jsonl" 2>/dev/null || echo 0)" \
  "(dry run: $dry); files under $W"
exit $rc
