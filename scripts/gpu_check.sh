#!/usr/bin/env bash
# One call on the H200 (sm_90a): environment, GPU tests (CTest label `gpu`) and benchmarks.
#
# Binaries are built on the development machine (glibc 2.36; they run on the device's Ubuntu
# 24.04) and carried in .devcarry/bin by scripts/device_carry.sh; without them this script
# builds with cmake on the device. Logs and results go to $OUT (the device tool's return
# folder) or ./gpu-out.
#   scripts/gpu_check.sh [--tests-only] [--gtest-filter PATTERN]
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT_DIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT_DIR"
FILTER='*'
TESTS_ONLY=0
while (($#)); do
  case "$1" in
    --tests-only) TESTS_ONLY=1 ;;
    --gtest-filter) FILTER=$2; shift ;;
    *) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# Binaries have the source tree's absolute path compiled in (testdata, task files); make it
# resolve on the device, whose copy of the tree lives elsewhere.
BAKED=$(cat .devcarry/source_dir 2>/dev/null || echo /work/main)
if [[ ! -e "$BAKED" ]]; then mkdir -p "$(dirname "$BAKED")" && ln -sfn "$ROOT" "$BAKED"; fi

# cuDNN matching our 9.19 headers lives in the PyTorch venv; the system one is 9.14.
CUDNN_DIR=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
CUBLAS_DIR=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib 2>/dev/null | head -1)
export LD_LIBRARY_PATH="${CUDNN_DIR:+$CUDNN_DIR:}${CUBLAS_DIR:+$CUBLAS_DIR:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH:$(ls -d /opt/nvidia/nsight-compute/* 2>/dev/null | tail -1)"

if [[ -d .devcarry/bin ]]; then
  BIN=$ROOT/.devcarry/bin
else
  echo "gpu_check: no carried binaries; building on the device"
  cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    ${CUDNN_DIR:+-DPTXB_CUDNN_ROOT=$(dirname "$CUDNN_DIR")} >"$OUT_DIR/build.log" 2>&1 &&
    cmake --build build-device -j"$(nproc)" >>"$OUT_DIR/build.log" 2>&1 || { tail -40 "$OUT_DIR/build.log"; exit 1; }
  BIN=$ROOT/build-device
fi

{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
} | tee "$OUT_DIR/device.txt"
"$BIN/ptxbench" env --json >"$OUT_DIR/env.json" 2>&1
"$BIN/ptxbench" env | head -30

status=0
if [[ -x "$BIN/ptxbench_gpu_tests" ]]; then
  echo "== GPU tests (filter: $FILTER)"
  "$BIN/ptxbench_gpu_tests" --gtest_filter="$FILTER" --gtest_output="json:$OUT_DIR/gpu_tests.json" \
    >"$OUT_DIR/gpu_tests.log" 2>&1 || status=1
  grep -E "^\[  (FAILED|PASSED) |^\[==========\]|Failure|mismatch" "$OUT_DIR/gpu_tests.log" | head -60
else
  echo "gpu_check: no ptxbench_gpu_tests binary" >&2
  status=1
fi

if ((TESTS_ONLY == 0)) && [[ -x bench/run_gpu_benchmarks.sh ]]; then
  echo "== benchmarks"
  BIN="$BIN" OUT_DIR="$OUT_DIR" bash bench/run_gpu_benchmarks.sh || status=1
fi
exit $status
