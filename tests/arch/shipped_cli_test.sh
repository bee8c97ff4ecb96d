#!/usr/bin/env bash
# The shipped `ptxbench` has no test-only option and no test double (they live in
# ptxbench-testing, tests/support/testing_cli.cc): no `--help` of it, the top level's or any
# subcommand's (nested ones too), mentions a `--test-` option, and `nm -C` finds no `Fake`
# class in it. ptxbench-testing, when given, is the positive control: its help does list them.
#   tests/arch/shipped_cli_test.sh PTXBENCH [PTXBENCH_TESTING]
set -uo pipefail
CLI=${1:?usage: shipped_cli_test.sh PTXBENCH [PTXBENCH_TESTING]}
TESTING=${2:-}
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# The subcommand names a --help text lists (CLI11: a "Subcommands:" block of indented lines).
subcommands() {
  awk 'toupper($0) ~ /^SUBCOMMANDS:/ {on = 1; next} on && /^[^ ]/ {on = 0} on && /^  [a-z]/ {print $1}'
}

# Every --help text of a binary and its subcommands under "== PATH" headers, from command path
# $2 ("" for the top level) down; "!! PATH" for a --help that failed.
walk() {
  local bin=$1 path=$2 help
  # shellcheck disable=SC2086
  help=$("$bin" $path --help 2>&1) || { echo "!! $path: exit $?"; return; }
  echo "== $path"
  echo "$help"
  for sub in $(echo "$help" | subcommands); do walk "$bin" "${path:+$path }$sub"; done
}

shipped=$(walk "$CLI" "")
if echo "$shipped" | grep '^!! '; then fail "a --help of $CLI failed"; fi
commands=$(echo "$shipped" | grep -c '^== ')
echo "shipped_cli: $commands help texts of $CLI"
((commands >= 9)) || fail "only $commands help texts found (expected the top level and 8 commands)"
if echo "$shipped" | grep -n -- '--test-'; then fail "$CLI --help lists a --test- option"; fi

symbols=$(nm -C "$CLI" 2>&1) || fail "nm -C $CLI: $symbols"
fakes=$(echo "$symbols" | grep -E 'Fake[A-Za-z]*::' | head -5)
[[ -z "$fakes" ]] || fail "$CLI links test doubles: $fakes"
# The test-only option names are not even in the binary's strings.
if grep -a -q -- '--test-' "$CLI"; then fail "$CLI contains the string --test-"; fi

if [[ -n "$TESTING" ]]; then
  testing=$(walk "$TESTING" "")
  if echo "$testing" | grep '^!! '; then fail "a --help of $TESTING failed"; fi
  for option in "eval --test-reference-as-candidate" "eval --test-disable-static-checks" \
    "compile --test-disable-static-checks" "run --test-fake-eval"; do
    command=${option%% *} flag=${option#* }
    # (grep reads here-strings, not pipes: with pipefail, `... | grep -q` fails on a match.)
    help=$(awk -v c="== $command" '$0 == c {on = 1; next} /^== / {on = 0} on' <<<"$testing")
    grep -q -- "$flag" <<<"$help" || fail "$TESTING $command --help does not list $flag"
  done
  grep -q 'ptxb::FakeTurnEvaluator::' <<<"$(nm -C "$TESTING")" ||
    fail "$TESTING links no FakeTurnEvaluator (is the nm check blind?)"
fi
((failures == 0)) && echo "shipped_cli: ok"
exit $((failures != 0))
