#!/usr/bin/env bash
# The link split (docs/architecture.md): the sandbox launcher and the untrusted runner link only
# what they run. Neither ptxbench-sandbox nor ptxbench-runner (when built) may hold a symbol of
# the agent, the model clients, the report, the metrics or the supervisor: the forbidden names
# are the classes/structs and the free functions declared in those folders' headers (minus any
# name also declared in a folder those binaries may link), looked for as `ptxb::[ns::]NAME::`,
# `ptxb::[ns::]NAME<` or `ptxb::[ns::]NAME(` in `nm -C`. The runner must not load cuBLAS or
# cuDNN either (readelf -d NEEDED, and no such symbol linked statically). The same names found in
# `ptxbench` are the positive control: they show the check can see them.
#   tests/arch/link_split_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
SRC=${1:?usage: link_split_test.sh SOURCE_DIR BUILD_DIR}
BUILD=${2:?usage: link_split_test.sh SOURCE_DIR BUILD_DIR}
FORBIDDEN_DIRS=(agent llm report metrics supervisor supervisor/device)
ALLOWED_DIRS=(core trace protocol sandbox runner cuda mains)
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

headers() { for d in "$@"; do ls "$SRC/src/$d"/*.h "$SRC/src/$d"/*.cuh 2>/dev/null; done; }
# Class and struct names; names of free functions declared on one line at namespace scope.
declared_types() { headers "$@" | xargs grep -hoE '^\s*(class|struct) [A-Z][A-Za-z0-9_]*' | awk '{print $2}'; }
declared_functions() {
  headers "$@" | xargs grep -hoE '^[A-Za-z][A-Za-z0-9_:<>,* &]*[ *&][a-z_][a-z0-9_]*\(' |
    grep -oE '[a-z_][a-z0-9_]*\($' | tr -d '('
}

allowed=$( (declared_types "${ALLOWED_DIRS[@]}"; declared_functions "${ALLOWED_DIRS[@]}") | sort -u)
types=$(declared_types "${FORBIDDEN_DIRS[@]}" | sort -u | comm -23 - <(echo "$allowed"))
functions=$(declared_functions "${FORBIDDEN_DIRS[@]}" | sort -u | comm -23 - <(echo "$allowed"))
n_types=$(echo "$types" | wc -w) n_functions=$(echo "$functions" | wc -w)
echo "link_split: $n_types classes/structs and $n_functions functions of ${FORBIDDEN_DIRS[*]}"
((n_types >= 30 && n_functions >= 30)) || fail "too few names found in the headers (parsing broken?)"
pattern="ptxb::([a-z_][a-z0-9_]*::)*(($(echo "$types" | paste -sd'|'))(::|<)|($(echo "$functions" | paste -sd'|'))\()"

# The forbidden symbols linked into a binary, one per line.
forbidden_in() { nm -C "$1" 2>/dev/null | grep -oE "$pattern" | sort -u; }

for name in ptxbench-sandbox ptxbench-runner; do
  bin=$BUILD/$name
  if [[ ! -f "$bin" ]]; then
    [[ $name == ptxbench-runner ]] && { echo "link_split: no $name (PTXB_WITH_CUDA=OFF)"; continue; }
    fail "$bin missing"
    continue
  fi
  nm "$bin" >/dev/null 2>&1 || { fail "nm $bin failed"; continue; }
  found=$(forbidden_in "$bin")
  if [[ -n "$found" ]]; then
    fail "$name links harness code ($(echo "$found" | wc -l) names): $(echo "$found" | head -10 | paste -sd' ') ..."
  else
    echo "link_split: $name: no harness symbol ($(nm -C --defined-only "$bin" | grep -c 'ptxb::') ptxb:: symbols)"
  fi
  needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ')
  echo "link_split: $name NEEDED: $needed"
  # (grep reads here-strings, not pipes: with pipefail, `nm | grep -q` fails when grep matches.)
  if grep -qiE 'cublas|cudnn|nvrtc' <<<"$needed"; then fail "$name loads $needed"; fi
  if grep -qiE ' [TtWw] .*(cublas|cudnn)' <<<"$(nm -C "$bin")"; then
    fail "$name links cuBLAS/cuDNN code statically"
  fi
done

if [[ -f "$BUILD/ptxbench" ]]; then
  control=$(forbidden_in "$BUILD/ptxbench" | wc -l)
  echo "link_split: positive control: ptxbench holds $control of the forbidden names"
  ((control >= 20)) || fail "ptxbench holds only $control forbidden names: is the check blind?"
fi
((failures == 0)) && echo "link_split: ok"
exit $((failures != 0))
