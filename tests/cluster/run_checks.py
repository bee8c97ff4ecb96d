"""Checks of the scale-out end-to-end test (tests/cluster/scale_out_e2e_test.sh).

  run_checks.py same-results LOCAL_DIR SHARDED_DIR REPORT_LOCAL REPORT_SHARDED
      the sorted turn records and the `report --json` outputs of the two runs are identical
      once the fields below are left out
  run_checks.py same-verdicts LOCAL_DIR SHARDED_DIR
      for two runs on a real GPU, where timings differ from run to run: the sorted turn records
      are identical once the measured fields (below) are left out too; prints how far the
      speedups differ
  run_checks.py no-duplicates DIR EXPECTED_TURNS
      every (trajectory, turn) is recorded exactly once, EXPECTED_TURNS in all
  run_checks.py status STATUS_JSON KEY=VALUE...
      `ptxbench status --json` has these values (KEY: a top-level field, or SHARD.FIELD;
      VALUE: JSON, or ~TEXT for "contains TEXT", or IN:a,b for one of several words)
Exit 1 with the differences on failure.
"""
import glob
import json
import os
import sys

# Fields that legitimately differ between a local and a sharded run of the same plan:
IGNORED_RECORD_FIELDS = {"wall_s"}  # durations of the model call and the evaluation
IGNORED_REPORT_FIELDS = {"run_dirs"}
# ... and on a real GPU, what each measurement gives anew (same-verdicts):
MEASURED_RECORD_FIELDS = {"speedup", "speedup_low", "speedup_high", "speedup_interval", "energy_ratio",
                          "also_reference_speedup"}  # where each group was loaded from (the folder's name)
# (The turn records hold no timestamp or host; plan.json, summary.json and the logs, which do,
# are not compared.)


def turn_files(run_dir):
    return [os.path.join(run_dir, "turns.jsonl")] + sorted(
        glob.glob(os.path.join(run_dir, "shards", "*", "turns.jsonl")))


def records(run_dir):
    out = []
    for path in turn_files(run_dir):
        with open(path) as f:
            for line in f:
                if line.strip():
                    out.append(json.loads(line))
    return out


def strip(value, ignored):
    if isinstance(value, dict):
        return {k: strip(v, ignored) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [strip(v, ignored) for v in value]
    return value


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def same_results(local_dir, sharded_dir, report_local, report_sharded):
    def normalized(run_dir):
        rows = [strip(r, IGNORED_RECORD_FIELDS) for r in records(run_dir)]
        return sorted(rows, key=lambda r: (r["trajectory"], r["turn"]))
    a, b = normalized(local_dir), normalized(sharded_dir)
    if len(a) != len(b):
        fail(f"{len(a)} turn records locally, {len(b)} sharded")
    for x, y in zip(a, b):
        if x != y:
            fail(f"turn records differ:\n  local   {json.dumps(x)}\n  sharded {json.dumps(y)}")
    with open(report_local) as f:
        ra = strip(json.load(f), IGNORED_REPORT_FIELDS)
    with open(report_sharded) as f:
        rb = strip(json.load(f), IGNORED_REPORT_FIELDS)
    if ra != rb:
        fail("report --json outputs differ beyond " + ", ".join(sorted(IGNORED_REPORT_FIELDS)))
    print(f"ok: {len(a)} turn records and the report identical "
          f"(ignored: {sorted(IGNORED_RECORD_FIELDS)} in records, "
          f"{sorted(IGNORED_REPORT_FIELDS)} in the report)")


def same_verdicts(local_dir, sharded_dir):
    def by_turn(run_dir):
        return {(r["trajectory"], r["turn"]): r for r in records(run_dir)}
    a, b = by_turn(local_dir), by_turn(sharded_dir)
    if sorted(a) != sorted(b):
        fail(f"different turns: {sorted(set(a) ^ set(b))}")
    ignored = IGNORED_RECORD_FIELDS | MEASURED_RECORD_FIELDS
    ratios = []
    for key in sorted(a):
        x, y = strip(a[key], ignored), strip(b[key], ignored)
        if x != y:
            fail(f"turn {key} differs:\n  plain   {json.dumps(x)}\n  sharded {json.dumps(y)}")
        if a[key].get("speedup") and b[key].get("speedup"):
            ratios.append(b[key]["speedup"] / a[key]["speedup"])
    spread = f", speedup sharded/plain {min(ratios):.3f}-{max(ratios):.3f}" if ratios else ""
    print(f"ok: {len(a)} turns with the same statuses and verdicts{spread}")


def no_duplicates(run_dir, expected):
    keys = [(r["trajectory"], r["turn"]) for r in records(run_dir)]
    if len(keys) != len(set(keys)):
        fail(f"duplicate turn records in {run_dir}")
    if len(keys) != int(expected):
        fail(f"{len(keys)} turn records in {run_dir}, expected {expected}")
    print(f"ok: {len(keys)} turns, each recorded once")


def status(path, *checks):
    with open(path) as f:
        doc = json.load(f)
    shards = {s["shard"]: s for s in doc["shards"]}
    for check in checks:
        key, want = check.split("=", 1)
        if "." in key:
            shard, field = key.split(".", 1)
            if shard not in shards:
                fail(f"status has no shard {shard}: {sorted(shards)}")
            got = shards[shard][field]
        else:
            got = doc[key]
        if want.startswith("~"):
            good = want[1:] in str(got)
        elif want.startswith("IN:"):
            good = got in want[3:].split(",")
        else:
            good = got == json.loads(want)
        if not good:
            fail(f"status {key}: {json.dumps(got)}, expected {want}\n{json.dumps(doc, indent=1)}")
    print(f"ok: status {' '.join(checks)}")


if __name__ == "__main__":
    commands = {"same-results": same_results, "same-verdicts": same_verdicts,
                "no-duplicates": no_duplicates, "status": status}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        sys.exit(2)
    commands[sys.argv[1]](*sys.argv[2:])
