#!/usr/bin/env bash
# Installs a CUDA build made here into .devcarry/ (git-ignored), an ordinary install prefix
# (cmake --install: bin/, libexec/ptxbench/ with the helpers and the PyPI disassemblers,
# share/ptxbench/), plus the test and benchmark binaries in .devcarry/tests/ (tests are not
# installed). The device tool carries it (`carry: [".devcarry"]`) and scripts/gpu_check.sh
# runs it there without a rebuild.
#   scripts/device_carry.sh [BUILD_DIR]     (default: build; configured with PTXB_WITH_CUDA=ON)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
[[ -x $BUILD/ptxbench-runner ]] ||
  { echo "device_carry: $BUILD has no ptxbench-runner: configure it with -DPTXB_WITH_CUDA=ON" >&2; exit 1; }
rm -rf .devcarry
cmake --install "$BUILD" --prefix .devcarry >/dev/null
mkdir -p .devcarry/tests
for f in "$BUILD"/ptxbench-testing "$BUILD"/ptxbench_gpu_tests "$BUILD"/ptxbench_tests "$BUILD"/ptxbench_sandbox_probe "$BUILD"/bench/*; do
  [[ -f $f && -x $f ]] && cp "$f" .devcarry/tests/
done
# The test binaries are build-tree binaries: they find the carried shared libraries (lib/, see
# CMakeLists.txt) through LD_LIBRARY_PATH, which scripts/gpu_check.sh sets.
strip --strip-debug .devcarry/bin/* .devcarry/libexec/ptxbench/ptxbench-* \
  .devcarry/libexec/ptxbench/*.so .devcarry/tests/* 2>/dev/null || true
du -sh .devcarry
