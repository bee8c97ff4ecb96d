#!/usr/bin/env bash
# Installs everything PTXBench needs (Debian packages, pinned PyPI wheels) and builds it into
# build/. Idempotent: a second run only rebuilds what changed.
#   bash scripts/setup.sh            # install + build
#   PTXB_SKIP_INSTALL=1 bash ...     # build only (dependencies already present)
#   PTXB_BUILD_DIR=DIR, PTXB_JOBS=N   # another build folder (default build/), N build jobs
#   PTXB_WITH_FLASHINFER=ON bash ...  # also compile the FlashInfer GQA reference kernels (about
#                                     # 2.5 minutes more on 2 cores; docs/references.md)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# --- Debian packages (the CUDA 13 toolkit itself is part of the machine image) ---
APT_PACKAGES=(cmake ninja-build g++ pkg-config python3-pip git
  nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libseccomp-dev libcurl4-openssl-dev libsqlite3-dev libcpp-httplib-dev clang-format zlib1g-dev
  chromium clang-14 libclang-rt-14-dev slurm-wlm munge)
# clang-14, libclang-rt-14-dev: libFuzzer and the sanitizers for the fuzz targets
# (tests/fuzz, scripts/fuzz.sh), which scripts/test.sh runs for 20 s each.
# chromium: the HTML report test renders the report headless (tests/report/html_browser_test.cc)
# and scripts/report_screenshot.sh takes its screenshot. On a fresh Debian 12 machine it adds
# about 250 packages, 200 MB of downloads (GTK, Mesa, fonts). zlib1g-dev: that test decodes the
# screenshot PNG.
# slurm-wlm (22.05), munge: the one-node Slurm cluster that scripts/test.sh starts
# (scripts/slurm_ci.sh) for the `run --executor slurm` test (tests/cluster); about 40 packages,
# 15 MB. Installing them starts nothing: the daemons run only while the tests do.
# PyPI wheels, pinned: disassemblers (the toolkit here has none; 13.2.86 is the oldest 13.x on
# PyPI, it reads 13.0 cubins), NVML headers, cuDNN frontend headers (header-only C++ API).
PY_PACKAGES=(nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86
  nvidia-nvml-dev==13.0.87 nvidia-cudnn-frontend==1.32.0)
PY_DIR="$ROOT/.deps/py"
# FlashInfer's C++/CUDA headers (flashinfer/data/include, with its bundled CUTLASS and CCCL), the
# version the paper's GQA baselines used; a 14.6 MB wheel, 109 MB unpacked, fetched only with
# PTXB_WITH_FLASHINFER=ON. Its own folder and stamp, so pinning it again never reinstalls the
# wheels above. Only headers are used: the
# kernels are instantiated and compiled by CMake (src/references/flashinfer).
FLASHINFER_PACKAGE=flashinfer-python==0.6.14
FLASHINFER_DIR="$ROOT/.deps/flashinfer"

if [[ "${PTXB_SKIP_INSTALL:-0}" != 1 ]]; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  stamp="$PY_DIR/.installed"
  want="${PY_PACKAGES[*]}"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "setup: installing PyPI wheels into .deps/py: $want"
    rm -rf "$PY_DIR"
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$PY_DIR" "${PY_PACKAGES[@]}"
    echo "$want" >"$stamp"
  fi
  fi_stamp="$FLASHINFER_DIR/.installed"
  if [[ "${PTXB_WITH_FLASHINFER:-OFF}" == ON ]] &&
    [[ ! -f "$fi_stamp" || "$(cat "$fi_stamp")" != "$FLASHINFER_PACKAGE" ]]; then
    echo "setup: installing $FLASHINFER_PACKAGE (headers only, --no-deps) into .deps/flashinfer"
    rm -rf "$FLASHINFER_DIR"
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$FLASHINFER_DIR" \
      "$FLASHINFER_PACKAGE"
    echo "$FLASHINFER_PACKAGE" >"$fi_stamp"
  fi
  if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
    echo "setup: warning: no CUDA toolkit found (expected /usr/local/cuda/bin/nvcc);" \
      "compile stages will report the toolchain as missing" >&2
  fi
fi

# All GPU code is compiled wherever the CUDA toolkit is (it is part of the machine image, with
# cuDNN): the supervisor, the runner, the reference library, tests/gpu and bench/, so a compile
# error in GPU code fails CI even on a machine without a GPU. Without a GPU nothing of it runs:
# `ptxbench eval` compiles and analyses, then reports the GPU stages as skipped (exit 3), and the
# GPU tests (CTest label `gpu`) are listed as skipped by scripts/test.sh; scripts/gpu_check.sh
# runs them on the H200. Override with PTXB_WITH_CUDA / PTXB_BUILD_GPU_TESTS (ON/OFF).
NVCC=/usr/local/cuda/bin/nvcc  # CMake's PTXB_CUDA_ROOT
if [[ -x "$NVCC" ]]; then HAVE_NVCC=ON; else HAVE_NVCC=OFF; fi
PTXB_WITH_CUDA=${PTXB_WITH_CUDA:-$HAVE_NVCC}
PTXB_BUILD_GPU_TESTS=${PTXB_BUILD_GPU_TESTS:-$PTXB_WITH_CUDA}
if [[ $HAVE_NVCC == OFF && $PTXB_WITH_CUDA == OFF ]]; then
  echo "setup: warning: no $NVCC: building without the GPU code (PTXB_WITH_CUDA=OFF)" >&2
elif [[ $PTXB_WITH_CUDA == OFF ]]; then
  echo "setup: building without the GPU code (PTXB_WITH_CUDA=OFF)"
elif [[ ! -e /dev/nvidia0 ]] && ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "setup: no GPU here: the GPU code is compiled, not run (GPU stages and tests are skipped)"
fi
# Release (no -g) by default: debug info costs about a third of a clean build's time on a
# 2-core CI machine; PTXB_BUILD_TYPE=RelWithDebInfo for debugging.
BUILD_DIR=${PTXB_BUILD_DIR:-$ROOT/build}
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${PTXB_BUILD_TYPE:-Release}" \
  -DPTXB_WITH_CUDA="$PTXB_WITH_CUDA" -DPTXB_BUILD_GPU_TESTS="$PTXB_BUILD_GPU_TESTS" \
  -DPTXB_WITH_FLASHINFER="${PTXB_WITH_FLASHINFER:-OFF}" >/dev/null
cmake --build "$BUILD_DIR" --parallel "${PTXB_JOBS:-$(nproc)}"
echo "setup: built $BUILD_DIR/ptxbench"
