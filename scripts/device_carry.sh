#!/usr/bin/env bash
# Copies the binaries the H200 needs into .devcarry/ (git-ignored) so the device tool can carry
# them (`carry: [".devcarry"]`) and scripts/gpu_check.sh runs them without a rebuild there.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .devcarry && mkdir -p .devcarry/bin
for f in build/ptxbench build/ptxbench-testing build/ptxbench-runner build/ptxbench-supervisor build/ptxbench-sandbox build/libptxbench_reference.so build/ptxbench_gpu_tests build/ptxbench_tests build/ptxbench_sandbox_probe build/bench/*; do
  [[ -f "$f" && ( -x "$f" || "$f" == *.so ) ]] && cp "$f" .devcarry/bin/
done
pwd >.devcarry/source_dir
strip --strip-debug .devcarry/bin/* 2>/dev/null || true
du -sh .devcarry
