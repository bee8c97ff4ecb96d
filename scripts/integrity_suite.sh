#!/usr/bin/env bash
# The adversarial suite on the H200 in one command (docs/integrity.md): every exploit and
# legitimate kernel of testdata/integrity/expected.json through the real `ptxbench eval`, each
# verdict compared with the manifest, then the sandbox-class exploits again with the static
# checks disabled (--test-disable-static-checks) when this build has the sandbox.
#
# Uses the binaries carried in .devcarry/bin (scripts/device_carry.sh), like gpu_check.sh; the
# comparison itself is the test IntegritySuiteOnGpu in ptxbench_tests. Results: $OUT (the device
# tool's return folder) or ./gpu-out: integrity_results.{json,md}, integrity_suite.log.
# Exit status: 0 when every entry got its verdict, 1 otherwise.
#   scripts/integrity_suite.sh [--only id1,id2] [--budget SECONDS]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT_DIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT_DIR"
ONLY=""
BUDGET=540
while (($#)); do
  case "$1" in
    --only) ONLY=$2; shift ;;
    --budget) BUDGET=$2; shift ;;
    *) echo "integrity_suite: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# Binaries have the source tree's absolute path compiled in (testdata, task files); make it
# resolve on the device, whose copy of the tree lives elsewhere.
BAKED=$(cat .devcarry/source_dir 2>/dev/null || echo /work/main)
if [[ ! -e "$BAKED" ]]; then mkdir -p "$(dirname "$BAKED")" && ln -sfn "$ROOT" "$BAKED"; fi

# cuBLAS for the reference runner, as gpu_check.sh; the exploits that dlopen cuBLAS find it only
# where the sandbox does not hide it.
CUDNN_DIR=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
CUBLAS_DIR=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH="${CUDNN_DIR:+$CUDNN_DIR:}${CUBLAS_DIR:+$CUBLAS_DIR:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"

if [[ -d .devcarry/bin ]]; then BIN=$ROOT/.devcarry/bin; else BIN=$ROOT/build; fi
for tool in ptxbench ptxbench-runner ptxbench-supervisor ptxbench_tests; do
  [[ -x "$BIN/$tool" ]] || { echo "integrity_suite: $BIN/$tool missing (scripts/device_carry.sh)" >&2; exit 1; }
done

# The build has the sandbox when `eval` knows --unsafe-no-sandbox. Without it, the entries only
# the sandbox can stop (and the sandbox reruns) are reported as skipped.
SANDBOX=0
"$BIN/ptxbench" eval --help 2>/dev/null | grep -q -- "--unsafe-no-sandbox" && SANDBOX=1

# A canary secret: a scrubbed environment never lets it reach a result (env_api_key.cu).
CANARY="sk-ptxb-canary-$(date +%s)-$$"
export OPENAI_API_KEY=$CANARY

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>/dev/null
  echo "binaries: $BIN   sandbox: $SANDBOX   budget: ${BUDGET}s"
} | tee "$OUT_DIR/integrity_device.txt"

PTXB_INTEGRITY_SUITE=1 PTXB_INTEGRITY_CLI="$BIN/ptxbench" PTXB_INTEGRITY_OUT="$OUT_DIR" \
  PTXB_INTEGRITY_SANDBOX=$SANDBOX PTXB_INTEGRITY_CANARY="$CANARY" PTXB_INTEGRITY_ONLY="$ONLY" \
  PTXB_INTEGRITY_BUDGET_S="$BUDGET" PTXB_INTEGRITY_COMPILE=all \
  "$BIN/ptxbench_tests" --gtest_filter='IntegrityManifest.EveryKernelCompiles*:IntegritySuiteOnGpu.*' >"$OUT_DIR/integrity_suite.log" 2>&1
status=$?
if [[ -f "$OUT_DIR/integrity_results.md" ]]; then
  cat "$OUT_DIR/integrity_results.md"
else
  tail -40 "$OUT_DIR/integrity_suite.log"
fi
grep -E "^\[  (FAILED|PASSED|SKIPPED) " "$OUT_DIR/integrity_suite.log"
exit $((status != 0))
