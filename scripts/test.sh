#!/usr/bin/env bash
# Builds (through setup.sh) and runs every test that needs no GPU. GPU tests carry the CTest
# label `gpu` and run on an H200 through scripts/gpu_check.sh; here they are listed as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
gpu_tests=$(ctest -N -L gpu 2>/dev/null | sed -n 's/^Total Tests: //p')
echo "test: skipping ${gpu_tests:-0} GPU tests (CTest label 'gpu'; no GPU on this machine; run scripts/gpu_check.sh on an H200)"
ctest -LE gpu --output-on-failure --timeout 300 -j "$(nproc)"
