#!/usr/bin/env bash
# One device call that compares the compile-time configurations of a tunable expert rung on the
# H200 (run by bench/gemm_sweep.sh and bench/fwd_sweep.sh, which name the rung, its tasks and
# their configurations). Each configuration "name:MACRO=VALUE,MACRO=VALUE" ("name:" = the file's
# own defaults) is rendered once per task as `#define` lines in front of the source (a `*_causal`
# task also gets `#define PTXB_CAUSAL 1`), then evaluated with `ptxbench eval --json --no-ncu`
# once per seed; seeds are the outer loop, so every configuration of a pass sees the same GPU
# state. A hung configuration costs SWEEP_TIMEOUT, and what finished is still reported.
#   SWEEP_NAME     output prefix (required): $OUT_DIR/<name>.md (per evaluation status,
#                  candidate / reference median ms and speedup; then the median speedup per
#                  configuration and task), <name>.jsonl (one line per evaluation, with status,
#                  reason and message) and <name>_raw.tgz (rendered kernels and results)
#   SWEEP_SRC      the rung's source file (required)
#   SWEEP_TASKS    the tasks (required, space-separated)
#   SWEEP_CONFIGS  the configurations (required, separated by ';')
#   SWEEP_SEEDS    (default "31"), SWEEP_FLAGS (extra eval flags), SWEEP_TIMEOUT (seconds per
#                  evaluation, default 90)
# Needs BIN (the folder with `ptxbench`) and OUT_DIR; run from the repository root.
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
NAME=${SWEEP_NAME:?} SRC=${SWEEP_SRC:?}
read -r -a TASKS <<<"${SWEEP_TASKS:?}"
CONFIG_TEXT=${SWEEP_CONFIGS:?}
IFS=';' read -r -a CONFIGS <<<"${CONFIG_TEXT//$'\n'/}"
read -r -a SEEDS <<<"${SWEEP_SEEDS:-31}"
read -r -a FLAGS <<<"${SWEEP_FLAGS:-}"
[[ -f $SRC ]] || { echo "$NAME: $SRC not found (run from the repository root)" >&2; exit 1; }
W=$OUT_DIR/$NAME && mkdir -p "$W"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}

# Render every kernel first: a malformed configuration stops the sweep before any GPU time.
names=()
for cfg in "${CONFIGS[@]}"; do
  cfg=$(echo "$cfg" | tr -d '[:space:]')
  [[ -n $cfg ]] || continue
  name=${cfg%%:*} defs=${cfg#*:}
  [[ $cfg == *:* && $name =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "$NAME: bad configuration '$cfg' (name:DEFINES)" >&2; exit 2; }
  names+=("$name=$defs")
  for t in "${TASKS[@]}"; do
    {
      echo "// $NAME configuration $name: ${defs:-(defaults)}"
      [[ $t == *_causal ]] && echo "#define PTXB_CAUSAL 1"
      # A name given twice keeps its last value (a configuration = a base list + its own knobs).
      IFS=',' read -r -a D <<<"$defs"
      declare -A value=() && order=()
      for d in "${D[@]}"; do
        [[ $d =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]+$ ]] || { echo "$NAME: bad define '$d' in $name" >&2; exit 2; }
        [[ -v value[${d%%=*}] ]] || order+=("${d%%=*}")
        value[${d%%=*}]=${d#*=}
      done
      for n in "${order[@]}"; do echo "#define $n ${value[$n]}"; done
      unset value
      cat "$SRC"
    } >"$W/${name}__$t.cu" || exit 2
  done
done

for s in "${SEEDS[@]}"; do
  for entry in "${names[@]}"; do
    name=${entry%%=*}
    for t in "${TASKS[@]}"; do
      echo "== $name $t seed $s"
      base=$W/${name}__${t}__$s
      timeout "${SWEEP_TIMEOUT:-90}" "$BIN/ptxbench" eval "$W/${name}__$t.cu" --task "$t" --json \
        --seed "$s" --no-ncu "${FLAGS[@]}" >"$base.json" 2>"$base.err" || echo "eval $name $t $s: exit $?"
    done
  done
done

python3 - "$W" "$OUT_DIR" "$NAME" "${SEEDS[*]}" "${TASKS[*]}" "${names[@]}" <<'PY'
import json, statistics, sys
w, out, name_, seeds, tasks, configs = (sys.argv[1], sys.argv[2], sys.argv[3],
                                         sys.argv[4].split(), sys.argv[5].split(), sys.argv[6:])
rows = ["| config | defines | task | seed | status | candidate ms | reference ms | speedup |",
        "|---|---|---|---|---|---|---|---|"]
records, per = [], {}
f = lambda x, p: f"{x:.{p}f}" if isinstance(x, (int, float)) else "-"
for s in seeds:
    for c in configs:
        name, defs = c.split("=", 1)
        for t in tasks:
            base = f"{w}/{name}__{t}__{s}"
            rec = {"config": name, "defines": defs, "task": t, "seed": int(s)}
            try:
                r = json.load(open(base + ".json"))
            except Exception as e:  # a timeout or a crash: keep the stderr tail
                err = open(base + ".err", errors="replace").read()[-600:]
                rec.update(status="NO_RESULT", message=f"{e}; stderr: {err}")
                records.append(rec)
                rows.append(f"| {name} | {defs or '-'} | {t} | {s} | NO_RESULT | - | - | - |")
                continue
            wl = (r.get("workloads") or [{}])[0]
            cand = (wl.get("candidate_timing") or {}).get("median_ms")
            ref = (wl.get("reference_timing") or {}).get("median_ms")
            sp = wl.get("speedup")
            status = r.get("status", "?")
            rec.update(status=status, reason=r.get("reason"), message=str(r.get("message"))[:400],
                       candidate_ms=cand, reference_ms=ref, speedup=sp,
                       target_instructions=(r.get("target_instructions") or {}).get("verdict"))
            records.append(rec)
            shown = status + (f" ({r['reason']})" if status != "PASSED" and r.get("reason") else "")
            rows.append(f"| {name} | {defs or '-'} | {t} | {s} | {shown} | {f(cand, 4)} | "
                        f"{f(ref, 4)} | {f(sp, 4)} |")
            if status == "PASSED" and isinstance(sp, (int, float)):
                per.setdefault((name, t), []).append(sp)
rows += ["", "| config | task | median speedup | evaluations passed |", "|---|---|---|---|"]
for c in configs:
    name = c.split("=", 1)[0]
    for t in tasks:
        v = per.get((name, t), [])
        rows.append(f"| {name} | {t} | {f(statistics.median(v), 4) if v else '-'} | "
                    f"{len(v)}/{len(seeds)} |")
open(f"{out}/{name_}.md", "w").write("\n".join(rows) + "\n")
with open(f"{out}/{name_}.jsonl", "w") as fh:
    for rec in records:
        fh.write(json.dumps(rec, default=str) + "\n")
print("\n".join(rows))
PY
# The rendered kernels and raw results in one archive: the device tool returns few files.
tar czf "$OUT_DIR/${NAME}_raw.tgz" -C "$OUT_DIR" "$NAME"
