"""Summary of bench/debug_bench.sh: per failure kernel, the status, the kernel.cu line the debug
report points at and the one its `expect:` header names, and the raw tool outputs split out as
golden files. Exit 1 when a report points elsewhere (or nowhere).

  debug_bench_summary.py KERNELS_DIR OUT_DIR [GOLDENS_DIR]

GOLDENS_DIR (testdata/debug/h200): each kernel's result as <kernel>.result.json, without its
traces (tests/eval/debug_goldens_test.cc renders its feedback and
checks it against <kernel>.feedback.txt, written by that test under PTXB_UPDATE_GOLDEN=1)."""
import json
import pathlib
import re
import sys

EXPECT = re.compile(r"expect: kernel\.cu:(\d+) (\w+)")


def expected(kernel: pathlib.Path):
    match = EXPECT.search(kernel.read_text().splitlines()[0])
    if not match:
        sys.exit(f"{kernel}: the first line names no `expect: kernel.cu:LINE STATUS`")
    return int(match.group(1)), match.group(2)


def judge(line, status, result):
    debug = result.get("debug") or {}
    points = debug.get("points_at") or {}
    got = points.get("line")
    if result.get("status") != status:
        return "status", got
    if got == line:
        return "ok", got
    # Line info of a multi-line statement or an inlined helper may name a neighbour.
    if got is not None and abs(got - line) <= 2:
        return "near", got
    return "miss", got


def keep_golden(result: dict, goldens: pathlib.Path, name: str):
    slim = {k: v for k, v in result.items() if k != "traces"}
    goldens.mkdir(parents=True, exist_ok=True)
    (goldens / f"{name}.result.json").write_text(json.dumps(slim, indent=1) + "\n")


def main(kernels_dir: str, out_dir: str, goldens_dir: str = "") -> int:
    rows, failed = [], False
    for kernel in sorted(pathlib.Path(kernels_dir).glob("*.cu")):
        line, status = expected(kernel)
        out = pathlib.Path(out_dir) / kernel.stem
        try:
            result = json.loads((out / "result.json").read_text())
        except (OSError, ValueError) as error:
            rows.append((kernel.stem, status, "-", line, "-", "no result", f"{error}"[:80]))
            failed = True
            continue
        debug = result.get("debug") or {}
        (out / "sanitizer.txt").write_text(debug.get("sanitizer_output", ""))
        (out / "cuda_gdb.txt").write_text(debug.get("cuda_gdb_output", ""))
        (out / "debug.txt").write_text(debug.get("summary", ""))
        verdict, got = judge(line, status, result)
        if goldens_dir:
            keep_golden(result, pathlib.Path(goldens_dir), kernel.stem)
        failed |= verdict in ("miss", "status")
        source = (debug.get("points_at") or {}).get("source", "-")
        notes = "; ".join(debug.get("notes", []))[:120]
        wall = (out / "wall_s.txt").read_text().strip() if (out / "wall_s.txt").exists() else "?"
        rows.append((kernel.stem, f"{status} / {result.get('status')}", f"{got} ({source})",
                     line, f"{debug.get('elapsed_ms', 0) / 1000:.1f} s, wall {wall} s",
                     verdict, notes))
    header = ("kernel", "expected / got status", "points at", "expected line", "debug time",
              "verdict", "notes")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    text = "\n".join(lines) + "\n"
    (pathlib.Path(out_dir) / "summary.md").write_text(text)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
