#!/usr/bin/env bash
# FlashInfer's own figure on the three held-out GQA workloads (bench/flashinfer_python.py):
# FlashInfer 0.6.14 through its Python API, JIT-compiled by FlashInfer on the device, beside
# the latencies of our compiled-in FlashInfer reference (bench/flashinfer_bench.sh).
# The device has no network, so the wheels are carried: fetch them on the development machine
#   pip download --no-deps --python-version 3.12 --platform manylinux_2_28_x86_64 \
#     --platform manylinux2014_x86_64 --only-binary=:all: -d .whl flashinfer-python==0.6.14 \
#     apache-tvm-ffi==0.1.15.post2 cuda-tile==1.7.0 nvidia-cutlass-dsl==4.8.1 \
#     nvidia-cutlass-dsl-libs-base==4.8.1
# (22 MB; .whl/ is git-ignored) and run with `carry: [".whl"]`. They are installed --no-deps
# into a scratch folder on PYTHONPATH (the image's PyTorch venv has the other dependencies),
# never into the venv. FlashInfer's JIT compiles for sm_90a only (a few minutes on 16 cores).
#   bash bench/flashinfer_python.sh            (OUT_DIR, FI_WHEELS=.whl)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${OUT_DIR:-${OUT:-/tmp}}
FI_WHEELS=${FI_WHEELS:-.whl}
SITE=$(mktemp -d)
ls "$FI_WHEELS"/flashinfer_python-0.6.14-*.whl >/dev/null 2>&1 ||
  { echo "flashinfer_python: no FlashInfer 0.6.14 wheel in $FI_WHEELS (see the top comment)" >&2; exit 2; }
python3 -m pip install --quiet --no-deps --no-index --target "$SITE" "$FI_WHEELS"/*.whl ||
  { echo "flashinfer_python: pip install failed" >&2; exit 1; }
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} FLASHINFER_CUDA_ARCH_LIST=9.0a
export FLASHINFER_WORKSPACE_BASE=$SITE/ws MAX_JOBS=$(nproc)
python3 bench/flashinfer_python.py tasks "$OUT_DIR/flashinfer_python.json" 2>&1 |
  tee "$OUT_DIR/flashinfer_python.txt"
exit "${PIPESTATUS[0]}"
