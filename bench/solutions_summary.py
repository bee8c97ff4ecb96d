#!/usr/bin/env python3
"""Summarizes bench/solutions_bench.sh's `ptxbench eval --json` outputs as a markdown table.

usage: solutions_summary.py RAW_DIR
"""
import glob, json, os, sys
w = sys.argv[1]


def task_flops(task):
    """Useful FLOPs (docs/tasks.md): GEMM 2MNK; attention forward 4*B*H*S^2*D, halved when causal;
    backward 2.5x the forward. Sequence-length variants end in _s<S>."""
    if task.startswith("gemm_n7168_k5120"):
        return 2.0 * 8192 * 7168 * 5120
    if not task.startswith("mha_"):
        return None
    s = 4096
    if "_s" in task.split("d128")[-1]:
        s = int(task.rsplit("_s", 1)[1])
    f = 4.0 * 4 * 48 * s * s * 128
    if "causal" in task:
        f /= 2
    if task.startswith("mha_bwd"):
        f *= 2.5
    return f
print("| task | rung | seed | status | latency | reference | ratio | TFLOP/s | static (GMMA/TMA) | dynamic |")
print("|---|---|---|---|---|---|---|---|---|---|")
for p in sorted(glob.glob(f"{w}/*.json")):
    task, rung, seed = os.path.basename(p)[:-5].split("__")
    try: r = json.load(open(p))
    except Exception as e: print(f"| {task} | {rung} | {seed} | no result ({e}) |"); continue
    wl = (r.get("workloads") or [{}])[0]
    c, ref = wl.get("candidate_timing") or {}, wl.get("reference_timing") or {}
    ti = r.get("target_instructions", {})
    flops = task_flops(task)
    tf = f"{flops / (c['median_ms'] * 1e-3) / 1e12:.0f}" if flops and c.get("median_ms") else "-"
    dyn = ti.get("dynamic") or {}
    fams = dyn.get("families", {}) if isinstance(dyn, dict) else {}
    dyn_s = ", ".join(f"{k}: {v.get('thread_inst_executed_true')}" for k, v in fams.items())
    st = ti.get("static", {})
    print(f"| {task} | {rung} | {seed} | {r.get('status')} {r.get('reason','')} | {c.get('median_ms', '-')} | {ref.get('median_ms', '-')} | {wl.get('speedup') or '-'} | {tf} | {st.get('GMMA', 0)}/{st.get('TMA', 0)} | {ti.get('verdict')} {dyn_s} |")
    if r.get("status") != "PASSED": print(f"\n> {r.get('message', '')[:600]}\n")
