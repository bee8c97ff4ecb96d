#!/usr/bin/env bash
# Knob sweep of the gemm_n7168_k5120 rung 4 (solutions/gemm_n7168_k5120/rung4_tuned.cu) on the
# H200: each configuration "name:DEFINES" (DEFINES = comma-separated MACRO=VALUE, empty = the
# file's defaults, i.e. rung 3's choices) is rendered as `#define MACRO VALUE` lines in front of
# the file and evaluated once per seed with `ptxbench eval --no-ncu`; seeds are the outer loop so
# every configuration of one pass sees the same GPU state, and `base` runs first and last
# (`base2`) to show the reference's drift within the call. Prints and writes
# $OUT_DIR/gemm_sweep.md: per evaluation status, candidate / cuBLASLt median ms and speedup,
# then per configuration the median speedup over the seeds. Keep the winner as the file's
# defaults. About 8-12 s per evaluation: the default list (11 x 2) takes ~4-5 minutes.
#   SWEEP_CONFIGS (default: the list below, one "name:DEFINES" per word), SWEEP_SEEDS
#   (default "31 32"), SWEEP_FLAGS (extra eval flags), SWEEP_SRC (default rung4_tuned.cu).
# Needs BIN (folder with ptxbench) and OUT_DIR.
set -uo pipefail
BIN=${BIN:?} OUT_DIR=${OUT_DIR:?}
W=$OUT_DIR/gemm_sweep && mkdir -p "$W"
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-/tmp/ptxb-cache}
TASK=gemm_n7168_k5120
SRC=${SWEEP_SRC:-solutions/$TASK/rung4_tuned.cu}
# Why each (rung4_tuned.cu's top comment has the details):
#   base        rung 3's choices (control);  base2: the same again at the end (drift)
#   pwcta       producer waits on empty[] at CTA scope: no CCTL.IVALL per k-tile
#   s3          3 stages (cost of the shallower pipeline alone)
#   s3e4        3 stages + 4 staging boxes per warp: the epilogue never waits on a TMA store
#   s3e4pw      s3e4 + pwcta
#   skew1k/3k   consumer warpgroup 1 starts 1 / 3 us late: epilogues of the two warpgroups
#               overlap the other's main loop (pingpong-like); the lead is bounded by the ring
#   pwskew1k    pwcta + skew1k
#   alongN      raster groups of 8 cluster columns (B panel reuse) instead of 8 cluster rows
#   s3e4pwskew  s3e4 + pwcta + skew1k
DEFAULT_CONFIGS="base:
pwcta:PTXB_G_PRODUCER_WAIT_CTA=1
s3:PTXB_G_STAGES=3
s3e4:PTXB_G_STAGES=3,PTXB_G_EPI_BOXES=4
s3e4pw:PTXB_G_STAGES=3,PTXB_G_EPI_BOXES=4,PTXB_G_PRODUCER_WAIT_CTA=1
skew1k:PTXB_G_SKEW_NS=1000
skew3k:PTXB_G_SKEW_NS=3000
pwskew1k:PTXB_G_PRODUCER_WAIT_CTA=1,PTXB_G_SKEW_NS=1000
alongN:PTXB_G_RASTER_ALONG_N=1
s3e4pwskew:PTXB_G_STAGES=3,PTXB_G_EPI_BOXES=4,PTXB_G_PRODUCER_WAIT_CTA=1,PTXB_G_SKEW_NS=1000
base2:"
read -r -d '' -a CONFIGS <<<"${SWEEP_CONFIGS:-$DEFAULT_CONFIGS}"
read -r -a SEEDS <<<"${SWEEP_SEEDS:-31 32}"
read -r -a FLAGS <<<"${SWEEP_FLAGS:-}"

for c in "${CONFIGS[@]}"; do
  name=${c%%:*} defs=${c#*:}
  [[ $c == *:* && $name =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "bad config '$c' (name:DEFINES)"; exit 2; }
  {
    echo "// gemm_sweep.sh configuration $name: ${defs:-(defaults)}"
    IFS=',' read -r -a D <<<"$defs"
    for d in "${D[@]}"; do
      [[ $d =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]+$ ]] || { echo "bad define '$d' in $name" >&2; exit 2; }
      echo "#define ${d%%=*} ${d#*=}"
    done
    cat "$SRC"
  } >"$W/k_$name.cu" || exit 2
done

for s in "${SEEDS[@]}"; do
  for c in "${CONFIGS[@]}"; do
    name=${c%%:*}
    echo "== $name seed $s"
    "$BIN/ptxbench" eval "$W/k_$name.cu" --task "$TASK" --json --seed "$s" --no-ncu "${FLAGS[@]}" \
      >"$W/r_${name}_$s.json" 2>"$W/r_${name}_$s.err" || echo "eval $name $s: exit $?"
  done
done

names=()
for c in "${CONFIGS[@]}"; do names+=("${c%%:*}=${c#*:}"); done
python3 - "$W" "$OUT_DIR" "${SEEDS[*]}" "${names[@]}" <<'PY'
import json, statistics, sys
w, out, seeds, configs = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
rows = ["| config | defines | seed | status | candidate ms | reference ms | speedup |",
        "|---|---|---|---|---|---|---|"]
per = {}
for c in configs:
    name, defs = c.split("=", 1)
    for s in seeds:
        try:
            r = json.load(open(f"{w}/r_{name}_{s}.json"))
        except Exception as e:
            rows.append(f"| {name} | {defs or '-'} | {s} | no result ({type(e).__name__}) | - | - | - |")
            continue
        wl = (r.get("workloads") or [{}])[0]
        cand = (wl.get("candidate_timing") or {}).get("median_ms")
        ref = (wl.get("reference_timing") or {}).get("median_ms")
        sp = wl.get("speedup")
        st = r.get("status", "?")
        if st != "PASSED" and r.get("reason"):
            st += f" ({r['reason']})"
        f = lambda x, d: f"{x:.{d}f}" if isinstance(x, (int, float)) else "-"
        rows.append(f"| {name} | {defs or '-'} | {s} | {st} | {f(cand, 4)} | {f(ref, 4)} | {f(sp, 4)} |")
        if r.get("status") == "PASSED" and isinstance(sp, (int, float)):
            per.setdefault(name, []).append(sp)
rows += ["", "| config | median speedup | evaluations passed |", "|---|---|---|"]
for c in configs:
    name = c.split("=", 1)[0]
    v = per.get(name, [])
    rows.append(f"| {name} | {statistics.median(v):.4f} | {len(v)}/{len(seeds)} |" if v
                else f"| {name} | - | 0/{len(seeds)} |")
open(f"{out}/gemm_sweep.md", "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
PY
# The raw evaluations and rendered kernels in one archive: the device tool returns few files.
tar czf "$OUT_DIR/gemm_sweep_raw.tgz" -C "$OUT_DIR" gemm_sweep
