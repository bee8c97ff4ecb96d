#!/usr/bin/env bash
# An installed, moved copy of PTXBench works with the source and build trees out of sight
# (docs/architecture.md "Install layout"): `cmake --install` into a temporary prefix, move the
# prefix, then, in a private mount namespace where empty tmpfs mounts cover the source and build
# trees and with every PTXBENCH_* variable unset, run the installed ptxbench: tasks list, a
# prompt, a compile (when a CUDA toolkit is here), a replay run (exit 3 without a GPU), `env`;
# and a lone copy of the binary (no data next to it) must name every place it searched.
# Needs root or unprivileged user namespaces for `unshare --mount`. CTest: Install.Relocated.
#   tests/install/relocate_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SOURCE=$(realpath "$1")
BUILD=$(realpath "$2")

if [[ ${PTXB_RELOCATE_INNER:-0} != 1 ]]; then
  if ! unshare --mount --propagation private true 2>/dev/null &&
    ! unshare --mount --propagation private --map-root-user true 2>/dev/null; then
    echo "relocate_test: SKIPPED: no mount namespaces here (unshare --mount)"
    exit 77
  fi
  TMP=$(mktemp -d /tmp/ptxb-relocate.XXXXXX)
  trap 'rm -rf "$TMP"' EXIT
  cmake --install "$BUILD" --prefix "$TMP/staged" >"$TMP/install.log"
  mv "$TMP/staged" "$TMP/prefix"  # relocatable: nothing may remember where it was installed
  mkdir -p "$TMP/lonely/bin" "$TMP/home"
  cp "$TMP/prefix/bin/ptxbench" "$TMP/lonely/bin/"
  cp "$SOURCE/examples/gemm_simt.cu" "$TMP/kernel.cu"
  cp "$0" "$TMP/relocate_inner.sh"  # the source tree (and this file) will be covered
  # A fresh mount namespace (private propagation: nothing leaks to the host), as root or as a
  # user namespace's root.
  unshare_args=(--mount --propagation private)
  [[ $(id -u) == 0 ]] || unshare_args+=(--map-root-user)
  # Every PTXBENCH_* variable unset; HOME in the temporary folder (compile cache).
  rc=0
  env $(env | sed -n 's/^\(PTXBENCH_[A-Za-z0-9_]*\)=.*/-u \1/p') HOME="$TMP/home" \
    PTXB_RELOCATE_INNER=1 PTXB_RELOCATE_TMP="$TMP" \
    unshare "${unshare_args[@]}" bash "$TMP/relocate_inner.sh" "$SOURCE" "$BUILD" || rc=$?
  exit $rc
fi

# ---- inside the namespace ----
TMP=$PTXB_RELOCATE_TMP
P=$TMP/prefix
mount -t tmpfs ptxb-hidden "$BUILD"
mount -t tmpfs ptxb-hidden "$SOURCE"
[[ ! -e $SOURCE/tasks && ! -e $BUILD/ptxbench ]] || { echo "FAIL: the trees are still visible"; exit 1; }
cd "$TMP"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== $*"; }

step "layout"
for f in bin/ptxbench libexec/ptxbench/ptxbench-sandbox share/ptxbench/tasks/tasks.json \
  share/ptxbench/packs/variants.json share/ptxbench/solutions/replay.json; do
  [[ -e $P/$f ]] || fail "$P/$f was not installed"
done
ls "$P/libexec/ptxbench" "$P/libexec/ptxbench/tools" 2>/dev/null | tr '\n' ' '
echo

step "ptxbench env --json"
"$P/bin/ptxbench" env --json >env.json || fail "env exited $?"
python3 - "$P" <<'PY' || fail "env does not report the installed layout"
import json, os, sys
prefix = os.path.realpath(sys.argv[1])
install = json.load(open("env.json"))["install"]
print(json.dumps(install, indent=1))
assert install["data"]["path"] == prefix + "/share/ptxbench", install["data"]
assert install["data"]["how"] == "next to the executable", install["data"]
assert install["helpers"]["path"] == prefix + "/libexec/ptxbench", install["helpers"]
PY
if [[ -x $P/libexec/ptxbench/tools/cuobjdump ]]; then
  grep -q "$P/libexec/ptxbench/tools/cuobjdump" env.json || [[ -n $(command -v cuobjdump) ]] ||
    fail "the installed cuobjdump was not found"
fi

step "ptxbench tasks list"
"$P/bin/ptxbench" tasks list >tasks.txt || fail "tasks list exited $?"
grep -q gemm_n7168_k5120 tasks.txt || fail "tasks list: no gemm_n7168_k5120: $(head -5 tasks.txt)"

step "ptxbench prompt --task gemm_n7168_k5120 --variant base"
"$P/bin/ptxbench" prompt --task gemm_n7168_k5120 --variant base >prompt.txt ||
  fail "prompt exited $?"
[[ $(wc -c <prompt.txt) -gt 1000 ]] || fail "prompt: $(wc -c <prompt.txt) bytes"

if command -v nvcc >/dev/null 2>&1 || [[ -x ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc ]]; then
  step "ptxbench compile kernel.cu --task gemm_n7168_k5120"
  "$P/bin/ptxbench" compile kernel.cu --task gemm_n7168_k5120 --json >compile.json ||
    fail "compile exited $?: $(head -c 2000 compile.json)"

  step "ptxbench run --model replay (exit 3 without a GPU)"
  set +e
  "$P/bin/ptxbench" run --model replay --task gemm_n7168_k5120 --variants base --turns 1 \
    --trajectories 1 --out "$TMP/replay" >replay.out 2>replay.err
  rc=$?
  set -e
  [[ $rc == 0 || $rc == 3 ]] || fail "replay run exited $rc: $(tail -20 replay.err)"
  [[ -s $TMP/replay/turns.jsonl ]] || fail "replay run wrote no turns: $(tail -20 replay.err)"
  python3 - "$TMP/replay/turns.jsonl" <<'PY' || fail "replay: $(head -c 600 "$TMP/replay/turns.jsonl")"
import json, sys
turns = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
assert len(turns) == 1 and turns[0]["kernel_present"], turns
assert turns[0]["status"] in ("INFRA_ERROR", "PASSED", "INCORRECT", "SLOWER"), turns[0]["status"]
PY
  echo "replay run exit $rc"
else
  echo "== no CUDA toolkit here: compile and replay run skipped"
fi

step "a lone copy of ptxbench names every place it searched"
set +e
"$TMP/lonely/bin/ptxbench" tasks list >lonely.out 2>lonely.err
rc=$?
set -e
cat lonely.err
[[ $rc != 0 ]] || fail "tasks list without data succeeded"
for place in '$PTXBENCH_DATA_DIR (unset)' "$TMP/lonely/bin/../share/ptxbench"; do
  grep -qF "$place" lonely.err || fail "the error does not name $place"
done
PTXBENCH_DATA_DIR=$P/share/ptxbench "$TMP/lonely/bin/ptxbench" tasks list >/dev/null ||
  fail "PTXBENCH_DATA_DIR=$P/share/ptxbench was not used"
echo "relocate_test: OK"
