#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, Debian's clang-14 + libclang-rt-14-dev) into
# build-fuzz/ and runs each over its committed corpus (testdata/fuzz/<target>/). Pass: no
# crash, no sanitizer report, no input slower than the per-input timeout, no RSS above the
# limit. Prints one line per target: runs, runs/s, coverage, corpus growth, peak RSS.
#   bash scripts/fuzz.sh                      # CI: every target for 20 s (scripts/test.sh)
#   bash scripts/fuzz.sh --time 3600 --merge  # a longer campaign; new coverage is merged into
#                                             # testdata/fuzz/<target> (review, then commit)
#   bash scripts/fuzz.sh --time 600 trace_file model_response   # some targets only
# Environment: PTXB_FUZZ_BUILD_DIR (default build-fuzz), PTXB_FUZZ_JOBS (targets run at once,
# default: the number of cores, at most 4), PTXB_FUZZ_RSS_MB (default 1024).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

seconds=20
merge=0
targets=()
while (($#)); do
  case "$1" in
    --time) seconds=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
ALL_TARGETS=(trace_file run_records experiment_config model_response kernel_extract
  protocol_frame tool_output)
((${#targets[@]})) || targets=("${ALL_TARGETS[@]}")

CXX=${PTXB_FUZZ_CXX:-clang++-14}
if ! command -v "$CXX" >/dev/null 2>&1; then
  echo "fuzz: $CXX not found: install clang-14 and libclang-rt-14-dev (scripts/setup.sh does)" >&2
  exit 1
fi
BUILD=${PTXB_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
RSS_MB=${PTXB_FUZZ_RSS_MB:-1024}
# A parser gets 10 s for one input: far above any real input's milliseconds, so a report is a
# hang (a loop that does not advance), not a slow machine.
PER_INPUT_TIMEOUT=10
jobs=${PTXB_FUZZ_JOBS:-$(nproc)}
((jobs > 4)) && jobs=4

build_start=$SECONDS
mkdir -p "$BUILD"
if ! { cmake -S "$ROOT/tests/fuzz" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" &&
  cmake --build "$BUILD" --parallel "$(nproc)"; } >"$BUILD/build.log" 2>&1; then
  grep -E "error|FAILED|undefined" "$BUILD/build.log" | head -n 40 >&2 || tail -n 40 "$BUILD/build.log" >&2
  echo "fuzz: the build failed (log: $BUILD/build.log)" >&2
  exit 1
fi
echo "fuzz: built ${#ALL_TARGETS[@]} targets in $BUILD ($((SECONDS - build_start)) s)"

work=$(mktemp -d "${TMPDIR:-/tmp}/ptxb-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Runs one target; writes its summary line to $work/<target>.line, its log to <target>.log.
run_target() {
  local target=$1
  local seeds="$ROOT/testdata/fuzz/$target"
  local corpus="$work/$target.corpus"
  mkdir -p "$corpus" "$work/$target.artifacts"
  local before
  before=$(find "$seeds" -type f | wc -l)
  local status=0
  # New inputs go to the scratch corpus (first folder); the committed seeds are only read.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
    "$BUILD/fuzz_$target" "$corpus" "$seeds" -max_total_time="$seconds" \
    -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" -timeout="$PER_INPUT_TIMEOUT" \
    -print_final_stats=1 -artifact_prefix="$work/$target.artifacts/" \
    >"$work/$target.log" 2>&1 || status=$?
  local runs rate cov rss after
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$target.log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$work/$target.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$work/$target.log" | tail -1 | cut -d' ' -f2)
  after=$(($(find "$corpus" -type f | wc -l) + before))
  local verdict=ok
  if ((status != 0)); then
    verdict="FAILED (exit $status; the input is copied to build-fuzz-crashes/, log below)"
  fi
  echo "fuzz: $target: ${runs:-0} runs in $seconds s (${rate:-0}/s), coverage ${cov:-?}," \
    "corpus $before -> $after, peak RSS ${rss:-?} MB: $verdict" >"$work/$target.line"
  if ((merge && status == 0)); then
    "$BUILD/fuzz_$target" -merge=1 "$seeds" "$corpus" >>"$work/$target.log" 2>&1
  fi
  return $status
}

fuzz_start=$SECONDS
failed=0
pids=()
names=()
for target in "${targets[@]}"; do
  [[ -x "$BUILD/fuzz_$target" ]] || { echo "fuzz: no target $target" >&2; exit 2; }
  run_target "$target" &
  pids+=($!)
  names+=("$target")
  # At most $jobs targets at once: wait for the oldest before starting another.
  if ((${#pids[@]} >= jobs)); then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
for target in "${names[@]}"; do
  cat "$work/$target.line"
  if grep -q FAILED "$work/$target.line"; then
    tail -n 40 "$work/$target.log"
    mkdir -p "$ROOT/build-fuzz-crashes"
    cp -r "$work/$target.artifacts/." "$ROOT/build-fuzz-crashes/" 2>/dev/null || true
  fi
done
echo "fuzz: ${#names[@]} targets, $seconds s each, $jobs at a time: $((SECONDS - fuzz_start)) s" \
  "($( ((failed)) && echo FAILED || echo passed))"
exit $failed
