#!/usr/bin/env bash
# Forward-attention tuning sweep on the H200 (issue: mha_with_lse_d128[_causal] >= 1.0x cuDNN):
# solutions/mha_with_lse_d128/rung3_tuned.cu rendered once per configuration and task, the
# configuration's #defines in front (the causal task also gets "#define PTXB_CAUSAL 1" first),
# then `ptxbench eval --json --no-ncu`, one evaluation per seed. Prints a markdown table (config,
# task, seed, status, candidate and reference median ms, speedup over cuDNN) and writes it to
# $OUT_DIR/fwd_sweep.md, one compact JSON line per evaluation to $OUT_DIR/fwd_sweep.jsonl
# (status, reason, message, timings: the device tool returns at most 8 files) and the raw
# results to $OUT_DIR/fwd_sweep_raw.tgz.
#   SWEEP_CONFIGS  configurations "name:DEF=VAL DEF2=VAL2" separated by ';' (default: the list
#                  below; "name:" with no defines is rung 3's defaults = rung 2's schedule),
#   SWEEP_TASKS    (default "mha_with_lse_d128 mha_with_lse_d128_causal"),
#   SWEEP_SEEDS    (default "31"), SWEEP_TIMEOUT seconds per evaluation (default 90).
# The default list is 12 configurations x 2 tasks x 1 seed = 24 evaluations, about 8-12 s each
# (4-5 minutes): one device call of <= 10 minutes. A hung configuration costs up to
# SWEEP_TIMEOUT, so the list runs the riskiest (persistent: new cross-item barrier protocol)
# last; what finished is still in the table. Knobs: top comment of rung3_tuned.cu. The list:
#   base               rung 2's schedule (control; rung 2 measured 0.976x / 0.974x)
#   pin                the P·V wait kept below the softmax (rung 2's SASS waits before the exps)
#   pin_tree(_skip)    + 4-way max/sum partials; + skip O *= 1 when no row maximum moved
#   pin_o1/o2_...      + FA3's order: O rescale under this consumer's own Q·K^T (o2: pack too)
#   kv176/192_pts      FA3's 176-key tile (fewer per-tile overheads; S tail masked), 2 stages
#   st2_pts            2 stages at 128 keys (isolates the stage count from the tile size)
#   pts_pers(_dyn_hg8) persistent CTAs: next item's Q/K/V load under this item's tail/epilogue;
#                      causal: dynamic heaviest-first scheduler (hg8: 8-head L2 groups; the
#                      non-causal task gets the dynamic scheduler there instead of static)
#   kv176_pts_pers     the FA3-like combination
# Needs BIN (the folder with `ptxbench`), OUT_DIR; run from the repository root.
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
SRC=solutions/mha_with_lse_d128/rung3_tuned.cu
W=$OUT_DIR/fwd_sweep && mkdir -p "$W"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
DEFAULT_CONFIGS="base:;\
pin:PTXB_F_PIN=1;\
pin_tree:PTXB_F_PIN=1 PTXB_F_TREE=1;\
pin_tree_skip:PTXB_F_PIN=1 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1;\
pin_o1_tree_skip:PTXB_F_PIN=1 PTXB_F_ORDER=1 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1;\
pin_o2_tree_skip:PTXB_F_PIN=1 PTXB_F_ORDER=2 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1;\
kv176_pts:PTXB_F_KV_TILE=176 PTXB_F_STAGES=2 PTXB_F_PIN=1 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1;\
kv192_pts:PTXB_F_KV_TILE=192 PTXB_F_STAGES=2 PTXB_F_PIN=1 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1;\
st2_pts:PTXB_F_STAGES=2 PTXB_F_PIN=1 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1;\
pts_pers:PTXB_F_PIN=1 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1 PTXB_F_PERSISTENT=1;\
pts_pers_dyn_hg8:PTXB_F_PIN=1 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1 PTXB_F_PERSISTENT=1 PTXB_F_DYNAMIC=1 PTXB_F_HEAD_GROUP=8;\
kv176_pts_pers:PTXB_F_KV_TILE=176 PTXB_F_STAGES=2 PTXB_F_PIN=1 PTXB_F_TREE=1 PTXB_F_SKIP_RESCALE=1 PTXB_F_PERSISTENT=1"
IFS=';' read -r -a CONFIGS <<<"${SWEEP_CONFIGS:-$DEFAULT_CONFIGS}"
read -r -a TASKS <<<"${SWEEP_TASKS:-mha_with_lse_d128 mha_with_lse_d128_causal}"
read -r -a SEEDS <<<"${SWEEP_SEEDS:-31}"
[ -f "$SRC" ] || { echo "fwd_sweep: $SRC not found (run from the repository root)"; exit 1; }

: >"$W/index.tsv"
for cfg in "${CONFIGS[@]}"; do
  name=${cfg%%:*} defs=${cfg#*:}
  [ -n "$name" ] || continue
  for t in "${TASKS[@]}"; do
    k=$W/${name}__$t.cu
    {
      case $t in *_causal) echo "#define PTXB_CAUSAL 1" ;; esac
      for d in $defs; do echo "#define ${d%%=*} ${d#*=}"; done
      cat "$SRC"
    } >"$k"
    for s in "${SEEDS[@]}"; do
      echo "== $name $t seed $s ($defs)"
      base=$W/${name}__${t}__$s
      timeout "${SWEEP_TIMEOUT:-90}" "$BIN/ptxbench" eval "$k" --task "$t" --json --seed "$s" \
        --no-ncu >"$base.json" 2>"$base.err" || echo "eval $name $t $s: exit $?"
      printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$t" "$s" "$base" "$defs" >>"$W/index.tsv"
    done
  done
done

python3 - "$W" "$OUT_DIR" <<'PY'
import json, sys
w, out = sys.argv[1], sys.argv[2]
lines = ["| config | task | seed | status | candidate ms | reference ms | speedup |",
         "|---|---|---|---|---|---|---|"]
jl = []
for row in open(f"{w}/index.tsv"):
    name, task, seed, base, defs = row.rstrip("\n").split("\t")
    rec = {"config": name, "defines": defs, "task": task, "seed": int(seed)}
    try:
        r = json.load(open(base + ".json"))
    except Exception as e:  # timeout, crash: keep the stderr tail
        err = open(base + ".err", errors="replace").read()[-600:]
        rec.update(status="NO_RESULT", message=f"{e}; stderr: {err}")
        jl.append(rec)
        lines.append(f"| {name} | {task} | {seed} | NO_RESULT | - | - | - |")
        continue
    wl = (r.get("workloads") or [{}])[0]
    cand = (wl.get("candidate_timing") or {}).get("median_ms")
    ref = (wl.get("reference_timing") or {}).get("median_ms")
    sp = wl.get("speedup")
    rec.update(status=r.get("status"), reason=r.get("reason"), message=str(r.get("message"))[:400],
               workload_status=wl.get("status"), candidate_ms=cand, reference_ms=ref, speedup=sp,
               target_instructions=r.get("target_instructions"))
    jl.append(rec)
    f = lambda x, p: "-" if x is None else f"{x:.{p}f}"
    lines.append(f"| {name} | {task} | {seed} | {r.get('status')} | {f(cand, 4)} | {f(ref, 4)} | "
                 f"{f(sp, 4)} |")
open(f"{out}/fwd_sweep.md", "w").write("\n".join(lines) + "\n")
with open(f"{out}/fwd_sweep.jsonl", "w") as fh:
    for rec in jl:
        fh.write(json.dumps(rec, default=str) + "\n")
print("\n".join(lines))
PY
tar czf "$OUT_DIR/fwd_sweep_raw.tgz" -C "$OUT_DIR" fwd_sweep
