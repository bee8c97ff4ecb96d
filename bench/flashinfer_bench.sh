#!/usr/bin/env bash
# The GQA references on the H200, run by bench/run_gpu_benchmarks.sh (PTXB_BENCHMARKS=flashinfer):
#  1. tests/gpu/gqa_workload_test.cc and gqa_reference_test.cc (in ptxbench_gpu_tests, which the
#     device carry holds): FlashInfer 0.6.14 and the plain CUDA reference called through invoke()
#     on the three heldout-h100 GQA workloads: median latency, TFLOP/s, FlashInfer's plan, and
#     FlashInfer checked against the plain fp32 reference; then both on an uneven batch against a
#     double-precision host evaluation (under a minute);
#  2. A/A through the real evaluator (bench/aa_bench.sh, `--test-reference-as-candidate`): the
#     FlashInfer reference in both slots of `ptxbench-testing eval`, FI_AA_SEEDS (default "1 2")
#     per task, about 10 s per evaluation; prints status, the reference's CUPTI median, TFLOP/s
#     and the plan recorded in the trace.
# Needs a build configured with -DPTXB_WITH_FLASHINFER=ON (scripts/device_carry.sh), BIN, OUT_DIR
# (TESTS: the test binaries' folder, default the prefix's tests/). Exit 1 when a check fails.
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
TESTS=${TESTS:-$BIN/../tests}
GQA_TASKS="gqa_paged_decode_h24_kv8_d128_ps1 gqa_paged_prefill_causal_h24_kv8_d128_ps1 gqa_ragged_prefill_causal_h32_kv4_d128"
rc=0
echo "== GQA references on the workloads (ptxbench_gpu_tests)"
"$TESTS/ptxbench_gpu_tests" --gtest_filter='*GqaWorkloadGpu*:*GqaReferenceGpu*' |
  tee "$OUT_DIR/flashinfer_gqa.txt"
((PIPESTATUS[0] == 0)) || rc=1

echo "== A/A through ptxbench eval"
AA_TASKS=$GQA_TASKS AA_SEEDS=${FI_AA_SEEDS:-1 2} bash bench/aa_bench.sh || rc=1
python3 - "$OUT_DIR/aa_bench" $GQA_TASKS <<'PY' | tee "$OUT_DIR/flashinfer_aa.txt" || rc=1
import glob, json, sys
w, tasks = sys.argv[1], sys.argv[2:]
bad = 0
for t in tasks:
    flops = json.load(open(f"{w}/task_{t}.json")).get("flops", 0)
    for path in sorted(glob.glob(f"{w}/aa_{t}_*.json")):
        try:
            r = json.load(open(path))
        except Exception as e:
            print(f"{t} {path}: no result ({e})"); bad += 1; continue
        wl = (r.get("workloads") or [{}])[0]
        ref = (wl.get("reference_timing") or {}).get("median_ms")
        tf = f"{flops / (ref * 1e-3) / 1e12:.2f} TFLOP/s" if ref else "-"
        print(f"{t} {path.rsplit('_', 1)[-1][:-5]}: {r.get('status')} {r.get('reason', '')} "
              f"reference {ref} ms {tf} speedup {wl.get('speedup')}")
        backend = (wl.get("reference") or {}).get("backend") or {}
        for shape in backend.get("shapes", [])[:1]:
            print("  plan:", json.dumps(shape.get("plan")))
        bad += r.get("status") != "PASSED"
sys.exit(1 if bad else 0)
PY
exit $rc
