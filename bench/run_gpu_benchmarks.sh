#!/usr/bin/env bash
# GPU benchmarks run by `scripts/gpu_check.sh bench` (BIN, LIBEXEC and OUT_DIR set there).
set -uo pipefail
cd "$(dirname "$0")/.."
bash bench/eval_bench.sh
bash bench/solutions_bench.sh
