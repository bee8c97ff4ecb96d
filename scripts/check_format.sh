#!/usr/bin/env bash
# Checks that our C++/CUDA sources (src, tests, bench; not the knowledge packs, whose text is
# versioned content given to models, nor the candidate kernels under solutions/ and testdata/)
# are clang-formatted per .clang-format. Exit 1 with the offending files.
#   scripts/check_format.sh          # check
#   scripts/check_format.sh --fix    # format them in place
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check_format: clang-format not found (scripts/setup.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'src/*.cu' 'src/*.cuh' 'tests/*.cc' \
  'tests/*.h' 'tests/*.cu' 'bench/*.cc' 'bench/*.h' 2>/dev/null || find src tests bench -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh')
if [[ "${1:-}" == --fix ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not clang-formatted ($(clang-format --version | head -1)):"
  printf '  %s\n' "${bad[@]}"
  echo "fix: bash scripts/check_format.sh --fix"
  exit 1
fi
echo "check_format: ${#files[@]} files clang-formatted"
