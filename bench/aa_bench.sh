#!/usr/bin/env bash
# A/A timing fidelity on the H200 (timing-fidelity issue), run by bench/run_gpu_benchmarks.sh:
# the task's library in both slots (`ptxbench-testing eval --test-reference-as-candidate`), one
# evaluation per seed, no profiler. A perfect harness says 1.000 every time; the spread across
# seeds is the harness's own noise. Reports per task the speedups, |1 - median|, max - min, the
# interleaved blocks' largest reference drift and SM clock range, and the evaluations voided by a
# drifting reference. Targets: |1 - median| <= 0.5 %, max - min <= 2 %.
#   AA_TASKS (default: the five paper tasks), AA_SEEDS (default "1 2 3 4 5 6 7 8 9 10"),
#   AA_FLAGS (extra eval flags, e.g. "--timing-protocol sequential" for the before numbers).
# Split the seeds over device runs of <= 10 minutes (about 8-15 s per evaluation).
# Needs BIN, OUT_DIR (and TESTS: ptxbench-testing's folder, default the prefix's tests/).
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
W=$OUT_DIR/aa_bench && mkdir -p "$W"
read -r -a TASKS <<<"${AA_TASKS:-gemm_n7168_k5120 mha_with_lse_d128 mha_with_lse_d128_causal mha_bwd_d128 mha_bwd_d128_causal}"
read -r -a SEEDS <<<"${AA_SEEDS:-1 2 3 4 5 6 7 8 9 10}"
read -r -a FLAGS <<<"${AA_FLAGS:-}"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
source bench/task_stubs.sh
make_stubs "$W" "${TASKS[@]}" || exit 1

for t in "${TASKS[@]}"; do
  for s in "${SEEDS[@]}"; do
    echo "== A/A $t seed $s"
    "${TESTS:-$BIN/../tests}/ptxbench-testing" eval "$W/stub_$t.cu" --task "$t" --json --no-ncu \
      --test-reference-as-candidate --seed "$s" "${FLAGS[@]}" >"$W/aa_${t}_$s.json" \
      2>"$W/aa_${t}_$s.err" || echo "aa $t $s: exit $?"
  done
done

python3 - "$W" "$OUT_DIR" "${TASKS[*]}" "${SEEDS[*]}" "${AA_FLAGS:-}" <<'PY'
import json, os, statistics, sys
w, out, tasks, seeds, flags = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), sys.argv[5]
summary, lines = {}, []
lines.append(f"flags: `{flags or '(default: interleaved)'}`; seeds {' '.join(seeds)}\n")
lines.append("| task | evals | speedups | median | abs(1 - median) | max - min | pooled-median max - min | voided (drift) | max ref drift | max after-candidate slowdown | SM clock (blocks) | timing stage s |")
lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
for t in tasks:
    speedups, voids, drifts, clocks, stage, afters, pooled = [], 0, [], [], [], [], []
    for s in seeds:
        try:
            r = json.load(open(f"{w}/aa_{t}_{s}.json"))
        except Exception:
            continue
        wl = (r.get("workloads") or [{}])[0]
        il = wl.get("timing_interleave")
        if il:
            if il.get("after_candidate_slowdown") is not None:
                afters.append(il["after_candidate_slowdown"])
        if r.get("reason") == "reference_drift":
            voids += 1
            continue
        if wl.get("speedup") is not None and r.get("status") == "PASSED":
            speedups.append(wl["speedup"])
            # The ratio of pooled medians (the speedup before the median over couples).
            rt, ct = wl.get("reference_timing") or {}, wl.get("candidate_timing") or {}
            if rt.get("median_ms") and ct.get("median_ms"):
                pooled.append(rt["median_ms"] / ct["median_ms"])
        if il:
            drifts.append(il["max_abs_drift"])
            clocks += [il["sm_clock_mhz_min"], il["sm_clock_mhz_max"]]
        stage.append(r.get("stage_ms", {}).get("timing", 0) / 1000)
    med = statistics.median(speedups) if speedups else float("nan")
    spread = max(speedups) - min(speedups) if speedups else float("nan")
    summary[t] = {"speedups": speedups, "median": med, "spread": spread, "voided": voids,
                  "max_reference_drift": max(drifts) if drifts else None,
                  "after_candidate_slowdowns": afters, "pooled_median_speedups": pooled,
                  "sm_clock_mhz": [min(clocks), max(clocks)] if clocks else None,
                  "timing_stage_s": stage}
    clk = f"{min(clocks)}-{max(clocks)}" if clocks else "-"
    # The drift rule is the raw ratio of a reference block to the solo calibration (4a).
    dr = f"{max(drifts) * 100:.2f} %" if drifts else "-"
    ac = f"{max(afters) * 100:+.2f} %" if afters else "-"
    ps = f"{(max(pooled) - min(pooled)) * 100:.2f} %" if pooled else "-"
    lines.append(f"| {t} | {len(speedups)} | {', '.join(f'{x:.4f}' for x in speedups)} | {med:.4f} | "
                 f"{abs(1 - med) * 100:.2f} % | {spread * 100:.2f} % | {ps} | {voids} | {dr} | {ac} | {clk} | "
                 f"{statistics.median(stage) if stage else 0:.1f} |")
json.dump(summary, open(f"{out}/aa_bench.json", "w"), indent=1)
open(f"{out}/aa_bench.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
# The raw evaluations (blocks, clocks, drifts) in one archive: the device tool returns few files.
tar czf "$OUT_DIR/aa_raw.tgz" -C "$OUT_DIR" aa_bench
