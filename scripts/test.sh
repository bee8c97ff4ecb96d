#!/usr/bin/env bash
# Builds (through setup.sh) and runs every test that needs no GPU. GPU tests carry the CTest
# label `gpu` and run on an H200 through scripts/gpu_check.sh; here they are listed as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
gpu_sources=$(ls ../tests/gpu/*_test.c[cu] 2>/dev/null | wc -l)
if [[ -x ptxbench_gpu_tests ]]; then
  gpu_tests=$(ctest -N -L gpu 2>/dev/null | sed -n 's/^Total Tests: //p')
  echo "test: skipping ${gpu_tests:-0} GPU tests (CTest label 'gpu'); run them with scripts/gpu_check.sh on an H200"
else
  echo "test: GPU tests skipped: the ${gpu_sources} files in tests/gpu (CTest label 'gpu') are not built on a machine without a GPU; run scripts/gpu_check.sh on an H200"
fi
ctest -LE gpu --output-on-failure --timeout 300 -j "$(nproc)"
