#!/usr/bin/env bash
# What each binary holds (docs/architecture.md): file size and the number of distinct `ptxb::`
# functions defined in it (nm -C --defined-only, code symbols T/t/W whose demangled name starts
# with `ptxb::`, `[clone ...]` copies of one function counted once), as a Markdown table.
#   scripts/binary_census.sh [BUILD_DIR]      (default: build)
set -euo pipefail
BUILD=${1:-build}
echo "| binary | size (bytes) | size (MiB) | distinct ptxb:: functions |"
echo "|---|---:|---:|---:|"
for name in ptxbench ptxbench-runner ptxbench-sandbox; do
  bin=$BUILD/$name
  if [[ ! -f "$bin" ]]; then
    echo "| $name | not built | | |"
    continue
  fi
  size=$(stat -c %s "$bin")
  functions=$(nm -C --defined-only "$bin" | awk '$2 ~ /^[TtWw]$/ {$1 = ""; $2 = ""; print}' |
    sed -e 's/^ *//' -e 's/ \[clone [^]]*\]//g' | grep '^ptxb::' | sort -u | wc -l)
  echo "| $name | $size | $(awk -v s="$size" 'BEGIN {printf "%.1f", s / 1048576}') | $functions |"
done
