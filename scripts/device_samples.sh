#!/usr/bin/env bash
# Captures real tool output from the H200 for the evaluator's parsers' golden files
# (testdata/eval/ncu/, testdata/eval/sanitizer/): compiles variants of testdata/eval/gemm_variants.cu
# with the carried ptxbench, then runs the self-contained runner under ncu (source page, the
# dynamic-check metrics) and under compute-sanitizer. Run through the device tool from the repo
# root after scripts/device_carry.sh, carrying .devcarry, .deps/py/include and .deps/py/nvidia.
set -uo pipefail
B=.devcarry/bin
export PTXBENCH_CACHE_DIR=/tmp/ptxb-cache PATH=/usr/local/cuda/bin:$PATH
P=testdata/runner/gemm_selfcontained_small.json
compile_variant() {
  local v=$1
  { echo "#define PTXB_TEST_VARIANT $v"; cat testdata/eval/gemm_variants.cu; } >/tmp/variant_$v.cu
  $B/ptxbench compile /tmp/variant_$v.cu --task gemm_n7168_k5120 --json >$OUT/compile_$v.json || { echo "compile $v failed"; head -c 2000 $OUT/compile_$v.json; return 1; }
  python3 -c "import json;a=json.load(open('$OUT/compile_$v.json'))['artifact'];print(a['directory']+'/'+a['shared_object'])"
}
for v in "$@"; do
  so=$(compile_variant "$v") || continue
  echo "== variant $v: $so"
  /usr/bin/time -f "ncu wall %e s" ncu --clock-control none --profile-from-start off --page source --csv --print-source sass \
    --metrics inst_executed,thread_inst_executed_true $B/ptxbench-runner --self-contained --so "$so" --params-json $P \
    >$OUT/ncu_$v.csv 2>$OUT/ncu_$v.err; echo "ncu rc=$?"; tail -3 $OUT/ncu_$v.err
  grep -c . $OUT/ncu_$v.csv
  /usr/bin/time -f "memcheck wall %e s" compute-sanitizer --tool memcheck --error-exitcode 9 --show-backtrace device \
    $B/ptxbench-runner --self-contained --so "$so" --params-json $P >$OUT/memcheck_$v.txt 2>&1; echo "memcheck rc=$?"
  tail -3 $OUT/memcheck_$v.txt
done
# The device tool returns a few files per call: pack the samples into one archive.
(cd $OUT && tar czf samples.tgz ncu_* memcheck_* compile_* && rm -f ncu_* memcheck_* compile_*)
