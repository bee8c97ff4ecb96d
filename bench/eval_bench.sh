#!/usr/bin/env bash
# Evaluator benchmarks on the H200, run by bench/run_gpu_benchmarks.sh:
#   1. A/A: the GEMM reference in the candidate slot (--test-reference-as-candidate), 10 evals:
#      median speedup and coefficient of variation of the per-eval medians.
#   2. Our CUPTI device time vs ncu's gpu__time_duration.sum, per reference (one warm call).
#   3. Reference latency and TFLOP/s for the five paper tasks.
#   4. Wall time per stage of one evaluation per paper task (cached compile, no sanitizer, NCU on).
# Needs BIN (the install prefix's bin/, with ptxbench) and OUT_DIR; LIBEXEC (ptxbench-runner,
# libptxbench_reference.so) defaults to the prefix's libexec/ptxbench.
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
LIBEXEC=${LIBEXEC:-$BIN/../libexec/ptxbench}
W=$OUT_DIR/eval_bench && mkdir -p "$W"
TASKS=(gemm_n7168_k5120 mha_with_lse_d128 mha_with_lse_d128_causal mha_bwd_d128 mha_bwd_d128_causal)
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}

# A stub `run` for each task: it only has to compile; the library runs in its slot.
for t in "${TASKS[@]}"; do
  "$BIN/ptxbench" tasks show "$t" --json >"$W/task_$t.json" || exit 1
  python3 - "$W/task_$t.json" "$W/stub_$t.cu" "$W/params_$t.json" <<'PY'
import json, re, sys
task = json.load(open(sys.argv[1]))
sig = task["signature"]
open(sys.argv[2], "w").write("#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n#include <cstdint>\n" + sig + " {}\n")
d = task["definition"]
axes = {a: v["value"] for a, v in d["axes"].items() if "value" in v}
axes.update(task["workload"]["axes"])
dtypes = {k: v["dtype"] for k, v in list(d["inputs"].items()) + list(d["outputs"].items())}
params = []
for p in re.match(r"void run\((.*)\)", sig).group(1).split(","):
    name = p.strip().split()[-1].lstrip("*")
    if name == "stream": continue
    if name in task["shapes"]:
        n = 1
        for x in task["shapes"][name]: n *= x
        params.append({"name": name, "tensor": {"dtype": dtypes[name], "elements": n,
                       "init": "normal" if name in d["inputs"] else "zeros"}})
    else:
        params.append({"name": name, "i64": axes[name]})
json.dump({"signature": sig, "seed": 7, "warmup_calls": 1, "params": params}, open(sys.argv[3], "w"))
PY
done

echo "== 1. A/A GEMM x10"
for i in $(seq 1 10); do
  "$BIN/ptxbench" eval "$W/stub_gemm_n7168_k5120.cu" --task gemm_n7168_k5120 --json --no-ncu \
    --test-reference-as-candidate --seed "$i" >"$W/aa_$i.json" 2>"$W/aa_$i.err" || echo "aa $i: exit $?"
done

echo "== 3/4. one evaluation per paper task (library in the candidate slot, NCU on)"
for t in "${TASKS[@]}"; do
  s=$(date +%s.%N)
  "$BIN/ptxbench" eval "$W/stub_$t.cu" --task "$t" --json --test-reference-as-candidate >"$W/eval_$t.json" 2>"$W/eval_$t.err" || echo "eval $t: exit $?"
  e=$(date +%s.%N)
  echo "$t $(python3 -c "print($e-$s)")" >>"$W/wall.txt"
done

echo "== 2. ncu gpu__time_duration.sum per reference"
for t in "${TASKS[@]}"; do
  sel=$(python3 -c "import json;t=json.load(open('$W/task_$t.json'));print(t['reference_backend']+(':causal' if t['name'].endswith('_causal') else ''))")
  sig=$(python3 -c "import json;print(json.load(open('$W/task_$t.json'))['signature'])")
  PTXBENCH_REFERENCE=$sel PTXBENCH_REFERENCE_SIGNATURE=$sig ncu --clock-control none --profile-from-start off \
    --metrics gpu__time_duration.sum --csv --page raw --print-units base \
    "$LIBEXEC/ptxbench-runner" --self-contained --so "$LIBEXEC/libptxbench_reference.so" --params-json "$W/params_$t.json" \
    >"$W/ncu_time_$t.csv" 2>"$W/ncu_time_$t.err" || echo "ncu $t: exit $?"
done

python3 bench/eval_bench_summary.py "$W" "${TASKS[@]}" | tee "$OUT_DIR/eval_bench.md"
