#!/usr/bin/env bash
# H200 smoke test of the evaluator's pieces, one by one: `ptxbench compile` of the README example ->
# ptxbench-runner self-contained call (full size) -> ncu source page with the dynamic-check
# metrics -> compute-sanitizer memcheck (M=128). Run through the device tool from the repo root,
# carrying .deps/py/include and .deps/py/nvidia. Results: bench/results/gpu_check.md.
set -uo pipefail
V=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1); export LD_LIBRARY_PATH=$V/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cmake -S . -B build-device -G Ninja -DPTXB_BUILD_GPU_TESTS=OFF -DPTXB_CUDNN_ROOT=$V >/dev/null && cmake --build build-device -j16 --target ptxbench ptxbench-runner >$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
B=build-device
export PTXBENCH_CACHE_DIR=/tmp/ptxb-cache
$B/ptxbench compile examples/gemm_simt.cu --task gemm_n7168_k5120 --json > $OUT/compile.json || exit 1
SO=$(python3 -c "import json;a=json.load(open('$OUT/compile.json'))['artifact'];print(a['directory']+'/'+a['shared_object'])")
echo "so=$SO"
/usr/bin/time -f "self-contained wall %e s" $B/ptxbench-runner --self-contained --so $SO --params-json testdata/runner/gemm_selfcontained_full.json; echo "self-contained rc=$?"
/usr/bin/time -f "ncu wall %e s" ncu --clock-control none --profile-from-start off --page source --csv --print-source sass --metrics inst_executed,thread_inst_executed_true $B/ptxbench-runner --self-contained --so $SO --params-json testdata/runner/gemm_selfcontained_full.json > $OUT/ncu.csv 2>$OUT/ncu.err; echo "ncu rc=$?"
head -c 1500 $OUT/ncu.csv; echo; wc -l $OUT/ncu.csv; tail -5 $OUT/ncu.err
/usr/bin/time -f "memcheck wall %e s" compute-sanitizer --tool memcheck --error-exitcode 9 $B/ptxbench-runner --self-contained --so $SO --params-json testdata/runner/gemm_selfcontained_small.json > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?"; tail -5 $OUT/memcheck.txt
