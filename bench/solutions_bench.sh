#!/usr/bin/env bash
# Reference solutions (issues 9-11) through `ptxbench eval` on the H200, three evaluations each
# with fresh seeds; writes $OUT_DIR/reference_solutions.md (copied to bench/results/).
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
W=$OUT_DIR/solutions && mkdir -p "$W"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
for f in solutions/*/*.cu; do
  task=$(basename "$(dirname "$f")")
  rung=$(basename "$f" .cu)
  for seed in 11 12 13; do
    "$BIN/ptxbench" eval "$f" --task "$task" --json --seed "$seed" >"$W/${task}__${rung}__$seed.json" 2>"$W/${task}__${rung}__$seed.err" || true
  done
done
python3 - "$W" <<'PY' | tee "$OUT_DIR/reference_solutions.md"
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
PY
