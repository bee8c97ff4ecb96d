#!/usr/bin/env python3
"""Summarizes bench/eval_bench.sh's raw outputs (one run's files) into markdown + JSON.

usage: eval_bench_summary.py RAW_DIR TASK...   (writes RAW_DIR/../eval_bench.json)
"""
import csv, io, json, os, statistics, sys


def load(path):
    try:
        return json.load(open(path))
    except Exception as e:  # a missing or broken file is reported, not fatal
        return {"error": str(e)}


def ncu_kernel_ns(path):
    """Sum of gpu__time_duration.sum over the profiled kernels (ncu prints 751,808 style)."""
    try:
        rows = [l for l in open(path).read().splitlines() if l.startswith('"')]
    except OSError:
        return None, []
    kernels = []
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        value = r.get("gpu__time_duration.sum", "").replace(",", "")
        try:
            kernels.append((r.get("Kernel Name", ""), float(value)))
        except ValueError:
            continue  # the units row
    return (sum(v for _, v in kernels) if kernels else None), kernels


w, tasks = sys.argv[1], sys.argv[2:]
out = {}
print("## 1. A/A (cuBLASLt GEMM in both slots, 10 evaluations)\n")
speedups, medians = [], []
for i in range(1, 11):
    r = load(f"{w}/aa_{i}.json")
    wl = (r.get("workloads") or [{}])[0]
    if r.get("status") != "PASSED":
        print(f"- eval {i}: {r.get('status')} {r.get('reason')} {str(r.get('message', ''))[:200]}")
        continue
    speedups.append(wl["speedup"])
    medians.append(wl["candidate_timing"]["median_ms"])
if speedups:
    cv = statistics.pstdev(medians) / statistics.mean(medians) * 100
    print("speedups: " + ", ".join(f"{s:.4f}" for s in speedups))
    print(f"\nmedian speedup **{statistics.median(speedups):.4f}** (target 1.00 ± 0.01); coefficient of "
          f"variation of the 10 candidate medians **{cv:.3f} %** (target < 0.5 %)\n")
    out["aa"] = {"speedups": speedups, "candidate_medians_ms": medians,
                 "median_speedup": statistics.median(speedups), "cv_percent": cv}

print("## 2-4. Per paper task (one evaluation each, library in the candidate slot, NCU on)\n")
print("| task | reference median / min (CUPTI, L2 flushed) | SM clock during samples | ncu gpu__time_duration.sum | median vs ncu | min vs ncu | TFLOP/s (median) | eval wall | NCU stage | ncu verdict |")
print("|---|---|---|---|---|---|---|---|---|---|")
walls = {}
if os.path.exists(f"{w}/wall.txt"):
    walls = {k: float(v) for k, v in (l.split() for l in open(f"{w}/wall.txt"))}
for t in tasks:
    r, task = load(f"{w}/eval_{t}.json"), load(f"{w}/task_{t}.json")
    wl = (r.get("workloads") or [{}])[0]
    ref = wl.get("reference_timing") or {}
    med, mn = ref.get("median_ms"), ref.get("min_ms")
    ncu_ns, kernels = ncu_kernel_ns(f"{w}/ncu_time_{t}.csv")
    ncu_ms = ncu_ns / 1e6 if ncu_ns else None
    pct = lambda x: f"{(x - ncu_ms) / ncu_ms * 100:+.2f} %" if x and ncu_ms else "-"
    tf = f"{task.get('flops', 0) / (med * 1e-3) / 1e12:.0f}" if med else "-"
    stages = r.get("stage_ms") or {}
    clocks = f"{ref.get('sm_clock_mhz_min')}–{ref.get('sm_clock_mhz_max')} MHz"
    verdict = (r.get("target_instructions") or {}).get("verdict")
    print(f"| {t} | {med:.4f} / {mn:.4f} ms | {clocks} | {ncu_ms:.4f} ms ({len(kernels)} kernels) | {pct(med)} | {pct(mn)} | {tf} | "
          f"{walls.get(t, float('nan')):.1f} s | {stages.get('ncu', 0) / 1000:.1f} s | {verdict} ({r.get('status')}) |"
          if med and ncu_ms else f"| {t} | {med} | - | {ncu_ms} | - | - | - | - | - | {verdict} ({r.get('status')}: {str(r.get('message', ''))[:120]}) |")
    out[t] = {"reference_median_ms": med, "reference_min_ms": mn, "ncu_ms": ncu_ms,
              "ncu_kernels": kernels, "wall_s": walls.get(t), "stage_ms": stages,
              "status": r.get("status"), "reference": wl.get("reference"),
              "sm_clock_mhz": [ref.get("sm_clock_mhz_min"), ref.get("sm_clock_mhz_max")]}
print("\nStage times (ms) of those evaluations:\n")
for t in tasks:
    stages = out.get(t, {}).get("stage_ms") or {}
    print(f"- {t}: " + ", ".join(f"{k} {v:.0f}" for k, v in stages.items()))
json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(w)), "eval_bench.json"), "w"), indent=1)
