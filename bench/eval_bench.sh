#!/usr/bin/env bash
# Evaluator benchmarks on the H200 (issue 4), run by bench/run_gpu_benchmarks.sh:
#   1. A/A: the GEMM reference in the candidate slot (--test-reference-as-candidate), 10 evals:
#      median speedup and coefficient of variation of the per-eval medians.
#   2. Our CUPTI device time vs ncu's gpu__time_duration.sum, per reference (one warm call).
#   3. Reference latency and TFLOP/s for the five paper tasks.
#   4. Wall time per stage of one evaluation per paper task (cached compile, no sanitizer, NCU on).
# Needs BIN (folder with ptxbench, ptxbench-runner, libptxbench_reference.so) and OUT_DIR.
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
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
    "$BIN/ptxbench-runner" --self-contained --so "$BIN/libptxbench_reference.so" --params-json "$W/params_$t.json" \
    >"$W/ncu_time_$t.csv" 2>"$W/ncu_time_$t.err" || echo "ncu $t: exit $?"
done

python3 - "$W" "${TASKS[@]}" <<'PY' | tee "$OUT_DIR/eval_bench.md"
import csv, io, json, statistics, sys, glob, os
w, tasks = sys.argv[1], sys.argv[2:]
def load(p):
    try: return json.load(open(p))
    except Exception as e: return {"error": str(e)}
out = {}
print("## 1. A/A (cuBLASLt GEMM in both slots, 10 evaluations)\n")
sp, med = [], []
for i in range(1, 11):
    r = load(f"{w}/aa_{i}.json")
    wl = (r.get("workloads") or [{}])[0]
    if r.get("status") != "PASSED": print(f"- eval {i}: {r.get('status')} {r.get('reason')} {r.get('message','')[:200]}"); continue
    sp.append(wl["speedup"]); med.append(wl["candidate_timing"]["median_ms"])
if sp:
    cv = statistics.pstdev(med) / statistics.mean(med) * 100
    print(f"speedups: {', '.join(f'{s:.4f}' for s in sp)}")
    print(f"median speedup {statistics.median(sp):.4f} (target 1.00 +- 0.01); CV of candidate medians {cv:.3f} % (target < 0.5 %)\n")
    out["aa"] = {"speedups": sp, "candidate_medians_ms": med, "median_speedup": statistics.median(sp), "cv_percent": cv}
print("## 2-4. Per paper task\n")
print("| task | reference median (CUPTI) | ncu gpu__time_duration.sum | diff | TFLOP/s | eval wall | stages (ms) | ncu verdict |")
print("|---|---|---|---|---|---|---|---|")
walls = dict(l.split() for l in open(f"{w}/wall.txt")) if os.path.exists(f"{w}/wall.txt") else {}
for t in tasks:
    r = load(f"{w}/eval_{t}.json"); task = load(f"{w}/task_{t}.json")
    wl = (r.get("workloads") or [{}])[0]
    ref = (wl.get("reference_timing") or {}).get("median_ms")
    ncu_ns = None
    try:
        text = open(f"{w}/ncu_time_{t}.csv").read()
        rows = [l for l in text.splitlines() if l.startswith('"')]
        rd = list(csv.DictReader(io.StringIO("\n".join(rows))))
        vals = [float(x["gpu__time_duration.sum"]) for x in rd if x.get("gpu__time_duration.sum", "").replace('.', '', 1).isdigit()]
        ncu_ns = sum(vals) if vals else None
    except Exception as e: pass
    ncu_ms = ncu_ns / 1e6 if ncu_ns else None
    diff = f"{(ref - ncu_ms) / ncu_ms * 100:+.2f} %" if ref and ncu_ms else "-"
    tf = f"{task.get('flops', 0) / (ref * 1e-3) / 1e12:.0f}" if ref else "-"
    stages = ", ".join(f"{k} {v:.0f}" for k, v in (r.get("stage_ms") or {}).items())
    verdict = (r.get("target_instructions") or {}).get("verdict")
    print(f"| {t} | {ref if ref is None else f'{ref:.4f} ms'} | {ncu_ms if ncu_ms is None else f'{ncu_ms:.4f} ms'} | {diff} | {tf} | {float(walls.get(t, 'nan')):.1f} s | {stages} | {verdict} ({r.get('status')}) |")
    out[t] = {"reference_ms": ref, "ncu_ms": ncu_ms, "wall_s": walls.get(t), "stage_ms": r.get("stage_ms"), "status": r.get("status"), "reason": r.get("reason"), "message": r.get("message", "")[:300], "reference": wl.get("reference"), "environment": r.get("environment", {}).get("gpu_name")}
json.dump(out, open(os.path.join(os.path.dirname(w), "eval_bench.json"), "w"), indent=1)
PY
