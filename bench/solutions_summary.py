#!/usr/bin/env python3
"""Summarizes bench/solutions_bench.sh's `ptxbench eval --json` outputs as a markdown table.

usage: solutions_summary.py RAW_DIR
"""
import glob, json, os, sys
w = sys.argv[1]
print("| task | rung | seed | status | latency | reference | ratio | TFLOP/s | static (GMMA/TMA) | dynamic |")
print("|---|---|---|---|---|---|---|---|---|---|")
for p in sorted(glob.glob(f"{w}/*.json")):
    task, rung, seed = os.path.basename(p)[:-5].split("__")
    try: r = json.load(open(p))
    except Exception as e: print(f"| {task} | {rung} | {seed} | no result ({e}) |"); continue
    wl = (r.get("workloads") or [{}])[0]
    c, ref = wl.get("candidate_timing") or {}, wl.get("reference_timing") or {}
    ti = r.get("target_instructions", {})
    flops = {"gemm_n7168_k5120": 2.0 * 8192 * 7168 * 5120}.get(task)
    tf = f"{flops / (c['median_ms'] * 1e-3) / 1e12:.0f}" if flops and c.get("median_ms") else "-"
    dyn = ti.get("dynamic") or {}
    fams = dyn.get("families", {}) if isinstance(dyn, dict) else {}
    dyn_s = ", ".join(f"{k}: {v.get('thread_inst_executed_true')}" for k, v in fams.items())
    st = ti.get("static", {})
    print(f"| {task} | {rung} | {seed} | {r.get('status')} {r.get('reason','')} | {c.get('median_ms', '-')} | {ref.get('median_ms', '-')} | {wl.get('speedup') or '-'} | {tf} | {st.get('GMMA', 0)}/{st.get('TMA', 0)} | {ti.get('verdict')} {dyn_s} |")
    if r.get("status") != "PASSED": print(f"\n> {r.get('message', '')[:600]}\n")
