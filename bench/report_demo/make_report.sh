#!/usr/bin/env bash
# The HTML report of a 2-model run, committed as evidence of what a reader sees
# (bench/results/report-demo.{html,png}, report-demo-viewer.png):
#   - model `replay`: its recorded H200 run, bench/results/replay-paper-h100 (5 tasks, 2 turns);
#   - model `scripted`: a replay model over bench/report_demo/replay.json (3 tasks, 2 turns, a
#     failure and a fix per task), judged by the fake evaluator of `ptxbench-testing run
#     --test-fake-eval` (tests/support/fake_turn_evaluator.h): no GPU, the verdict is the
#     directive line of each answer. Its run directory is written fresh to
#     bench/results/report-demo/scripted-run.
# Usage: bench/report_demo/make_report.sh   (after scripts/setup.sh; needs chromium)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${PTXB_BUILD_DIR:-$ROOT/build}
OUT=bench/results/report-demo
cd "$ROOT"
rm -rf "$OUT/scripted-run"
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/exp.json" <<JSON
{"models": [{"name": "scripted", "api": "replay", "replay_dir": "bench/report_demo"}],
 "tasks": ["gemm_n7168_k5120", "mha_with_lse_d128", "mha_bwd_d128"],
 "variants": ["base"], "trajectories": 1, "turns": 2}
JSON
"$BUILD/ptxbench-testing" run --config "$work/exp.json" --out "$OUT/scripted-run" \
  --test-fake-eval "$work" >/dev/null
rm -f "$OUT/scripted-run/.lock"  # the run's lock, not a result
runs=(bench/results/replay-paper-h100 "$OUT/scripted-run")
PTXBENCH="$BUILD/ptxbench" scripts/report_screenshot.sh "${runs[@]}" bench/results/report-demo
# The viewer alone (a copy of the page with everything else hidden), opened at the replay
# model's GEMM, turn 2, which shows the diff from rung 1 to rung 3: the viewer's trajectories
# sort by model, so the replay model's five come first and GEMM is index 0.
sed 's|</head>|<style>body>*:not(#viewer){display:none}</style></head>|' \
  bench/results/report-demo.html >"$work/viewer.html"
HOME=$work timeout 120 chromium --headless --no-sandbox --disable-gpu \
  --user-data-dir="$work/profile" --no-first-run --disable-extensions \
  --disable-background-networking --host-resolver-rules="MAP * ~NOTFOUND" --hide-scrollbars \
  --window-size=1400,1500 --screenshot=bench/results/report-demo-viewer.png \
  "file://$work/viewer.html#viewer=0&turn=2" >/dev/null 2>"$work/chromium.log"
