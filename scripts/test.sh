#!/usr/bin/env bash
# Builds (through setup.sh) and runs every test that needs no GPU. The GPU code and the GPU tests
# are compiled wherever nvcc is (scripts/setup.sh); the GPU tests carry the CTest label `gpu` and
# run on an H200 through scripts/gpu_check.sh; here they are listed as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
bash scripts/setup.sh
cd "${PTXB_BUILD_DIR:-build}"
gpu_sources=$(ls "$ROOT"/tests/gpu/*_test.c[cu] 2>/dev/null | wc -l)
if [[ -x ptxbench_gpu_tests ]]; then
  gpu_tests=$(ctest -N -L gpu 2>/dev/null | sed -n 's/^Total Tests: //p')
  echo "test: GPU tests compiled (tests/gpu, ${gpu_tests:-0} tests, CTest label 'gpu'), skipped here; run them with scripts/gpu_check.sh on an H200"
else
  echo "test: GPU tests skipped: the ${gpu_sources} files in tests/gpu (CTest label 'gpu') are not built (PTXB_WITH_CUDA or PTXB_BUILD_GPU_TESTS is OFF); run scripts/gpu_check.sh on an H200"
fi
# A one-node Slurm cluster for the `run --executor slurm` test (CTest label `slurm`), up in a few
# seconds and stopped afterwards. Where it cannot start, that test is listed as skipped with the
# reason, unless PTXB_REQUIRE_SLURM=1 (.ci/run), where it fails.
slurm_started=0
if bash "$ROOT/scripts/slurm_ci.sh" start; then
  slurm_started=1
  eval "$(bash "$ROOT/scripts/slurm_ci.sh" env)"
else
  echo "test: warning: the CI Slurm cluster did not start; the slurm-labelled test will be skipped" >&2
fi
set +e
ctest -LE gpu --output-on-failure --timeout 300 -j "$(nproc)"
ctest_rc=$?
set -e
((slurm_started)) && bash "$ROOT/scripts/slurm_ci.sh" stop
((ctest_rc == 0)) || exit "$ctest_rc"
# Fuzzing (docs/cli.md "Fuzzing"): every parser of outside input under libFuzzer with ASan and
# UBSan, 20 s per target over the committed corpus; about 2 minutes on 2 cores, its build
# included. PTXB_SKIP_FUZZ=1 leaves it out (a quick local run).
cd "$ROOT"
if [[ "${PTXB_SKIP_FUZZ:-0}" != 1 ]]; then
  bash scripts/fuzz.sh --time "${PTXB_FUZZ_SECONDS:-20}"
fi
