#!/usr/bin/env bash
# Sourced by the GPU benchmarks: make_stubs DIR TASK... writes, per task, DIR/task_T.json
# (`ptxbench tasks show --json`), DIR/stub_T.cu (an empty `run` with the task's signature: the
# library sits in the candidate slot in A/A runs, so the stub only has to compile) and
# DIR/params_T.json (the self-contained runner's parameters). Needs BIN.
make_stubs() {
  local dir=$1 t
  shift
  for t in "$@"; do
    "$BIN/ptxbench" tasks show "$t" --json >"$dir/task_$t.json" || return 1
    python3 - "$dir/task_$t.json" "$dir/stub_$t.cu" "$dir/params_$t.json" <<'PY' || return 1
import json, re, sys
task = json.load(open(sys.argv[1]))
sig = task["signature"]
open(sys.argv[2], "w").write("#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n#include <cstdint>\n" + sig + " {}\n")
d = task["definition"]
axes = {a: v["value"] for a, v in d["axes"].items() if "value" in v}
axes.update(task["workload"]["axes"])
dtypes = {k: v["dtype"] for k, v in list(d["inputs"].items()) + list(d["outputs"].items())}
params = []
for p in re.match(r"void run\((.*)\)", sig).group(1).split(","):
    name = p.strip().split()[-1].lstrip("*")
    if name == "stream": continue
    if name in task["shapes"]:
        n = 1
        for x in task["shapes"][name]: n *= x
        params.append({"name": name, "tensor": {"dtype": dtypes[name], "elements": n,
                       "init": "normal" if name in d["inputs"] else "zeros"}})
    else:
        params.append({"name": name, "i64": axes[name]})
json.dump({"signature": sig, "seed": 7, "warmup_calls": 1, "params": params}, open(sys.argv[3], "w"))
PY
  done
}
