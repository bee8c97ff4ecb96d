#!/usr/bin/env python3
"""Summary of bench/profile_cost.sh: per entry and method, the profile stage's wall time (its
phases), the verdicts, and the ratio of the two methods measured in the same run."""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def load(directory):
    runs = defaultdict(list)  # (name, mode) -> [record]
    for path in sorted(Path(directory).glob("*__*__*.json")):
        name, mode, rep = path.stem.split("__")
        try:
            result = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            runs[(name, mode)].append({"error": str(error)})
            continue
        check = result.get("target_instructions", {})
        call = check.get("profiled_call") or {}
        work = check.get("work_done") or {}
        phases = check.get("phases_ms", {})
        stages = result.get("stage_ms", {})
        runs[(name, mode)].append({
            "status": f"{result.get('status')} {result.get('reason', '')}".strip(),
            "verdict": check.get("verdict"),
            "cost_s": check.get("cost_ms", 0) / 1000,
            "phases": "/".join(f"{phases.get(p, 0) / 1000:.1f}" for p in ("start", "calls", "report")),
            "scope": call.get("scope", "-"),
            "kernels": call.get("kernels", "-"),
            "ratio": call.get("ratio"),
            "work": work.get("fraction"),
            "eval_s": (sum(stages.values()) - stages.get("compile", 0)) / 1000,
            "focus_note": check.get("focus_note", ""),
        })
    return runs


def main():
    runs = load(sys.argv[1])
    names = []
    for name, _ in runs:
        if name not in names:
            names.append(name)
    print("| entry | method | status | target verdict | work done | profiled (scope, kernels) |"
          " ncu stage s (each run) | start/calls/report s | evaluation s without compile |")
    print("|---|---|---|---|---|---|---|---|---|")
    medians = {}
    for name in names:
        for mode in ("raw_page", "source_page"):
            rs = runs.get((name, mode), [])
            ok = [r for r in rs if "error" not in r]
            if not ok:
                print(f"| {name} | {mode} | (no result) | | | | | | |")
                continue
            costs = [r["cost_s"] for r in ok]
            medians[(name, mode)] = statistics.median(costs)
            verdicts = sorted({r["verdict"] for r in ok})
            statuses = sorted({r["status"] for r in ok})
            works = sorted({f"{r['work']:.3f}" for r in ok if r["work"] is not None}) or ["-"]
            print(f"| {name} | {mode} | {', '.join(statuses)} | {', '.join(verdicts)} |"
                  f" {', '.join(works)} | {ok[0]['scope']}, {ok[0]['kernels']} |"
                  f" {', '.join('%.2f' % c for c in costs)} |"
                  f" {'; '.join(r['phases'] for r in ok)} |"
                  f" {', '.join('%.1f' % r['eval_s'] for r in ok)} |")
    print()
    print("| entry | ncu stage, median s: raw page | source page | raw / source |"
          " above the fixed cost: raw page | source page | verdicts identical |")
    print("|---|---|---|---|---|---|---|")
    # The fixed cost: the same stage on the near-empty TMA + wgmma call, each method its own.
    fixed = medians.get(("fixed_wgmma_1024", "raw_page"))
    fixed_old = medians.get(("fixed_wgmma_1024", "source_page"))
    for name in names:
        new, old = medians.get((name, "raw_page")), medians.get((name, "source_page"))
        if new is None or old is None:
            continue
        same = ({(r["status"], r["verdict"]) for r in runs[(name, "raw_page")]} ==
                {(r["status"], r["verdict"]) for r in runs[(name, "source_page")]})
        above = f"{new - fixed:+.2f}" if fixed is not None else "-"
        above_old = f"{old - fixed_old:+.2f}" if fixed_old is not None else "-"
        print(f"| {name} | {new:.2f} | {old:.2f} | {new / old:.3f} | {above} | {above_old} |"
              f" {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
