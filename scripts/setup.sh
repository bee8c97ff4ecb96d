#!/usr/bin/env bash
# Installs everything PTXBench needs (Debian packages, pinned PyPI wheels) and builds it into
# build/. Idempotent: a second run only rebuilds what changed.
#   bash scripts/setup.sh            # install + build
#   PTXB_SKIP_INSTALL=1 bash ...     # build only (dependencies already present)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# --- Debian packages (the CUDA 13 toolkit itself is part of the machine image) ---
APT_PACKAGES=(cmake ninja-build g++ pkg-config python3-pip git
  nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libseccomp-dev libcurl4-openssl-dev libsqlite3-dev clang-format)
# PyPI wheels, pinned: disassemblers (the toolkit here has none; 13.2.86 is the oldest 13.x on
# PyPI, it reads 13.0 cubins), NVML headers, cuDNN frontend headers (header-only C++ API).
PY_PACKAGES=(nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86
  nvidia-nvml-dev==13.0.87 nvidia-cudnn-frontend==1.32.0)
PY_DIR="$ROOT/.deps/py"

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
  if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
    echo "setup: warning: no CUDA toolkit found (expected /usr/local/cuda/bin/nvcc);" \
      "compile stages will report the toolchain as missing" >&2
  fi
fi

# GPU tests are built only where a GPU can run them (see CMakeLists.txt); override with
# PTXB_BUILD_GPU_TESTS=ON|OFF.
if [[ -z "${PTXB_BUILD_GPU_TESTS:-}" ]]; then
  if [[ -e /dev/nvidia0 ]] || command -v nvidia-smi >/dev/null 2>&1; then
    PTXB_BUILD_GPU_TESTS=ON
  else
    PTXB_BUILD_GPU_TESTS=OFF
  fi
fi
# Release (no -g) by default: debug info costs about a third of a clean build's time on a
# 2-core CI machine; PTXB_BUILD_TYPE=RelWithDebInfo for debugging.
cmake -S "$ROOT" -B "$ROOT/build" -G Ninja -DCMAKE_BUILD_TYPE="${PTXB_BUILD_TYPE:-Release}" \
  -DPTXB_BUILD_GPU_TESTS="$PTXB_BUILD_GPU_TESTS" >/dev/null
cmake --build "$ROOT/build" --parallel "$(nproc)"
echo "setup: built $ROOT/build/ptxbench"
