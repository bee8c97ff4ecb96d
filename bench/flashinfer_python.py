"""FlashInfer's own figure for the three held-out GQA workloads, measured through its Python API.

The reference library compiles FlashInfer 0.6.14's CUDA sources with instantiations of our own
(src/references/flashinfer/). This script measures the same version as its users run it: the
`flashinfer-python` wheel's wrappers (BatchDecodeWithPagedKVCacheWrapper, and the FA3 backend
of BatchPrefillWithPagedKVCacheWrapper / BatchPrefillWithRaggedKVCacheWrapper), JIT-compiled by
FlashInfer itself, timed by FlashInfer's own `bench_gpu_time_with_cuda_event` (cold L2) and by
a plain CUDA-event loop with a 512 MiB L2 flush before every call. Every output is first checked
against the task definition's own Python reference (tasks/definitions/*.json, "reference").

Inputs: the task definitions and workloads of tasks/ (shapes, the safetensors index arrays);
random bf16 tensors for q/k/v. Prints a markdown table and writes JSON to argv[2].
  python3 bench/flashinfer_python.py TASKS_DIR OUT.json
Run on the device by bench/flashinfer_python.sh (installs the carried wheels).
"""

import json
import math
import statistics
import sys
import time

import torch
from safetensors.torch import load_file

import flashinfer
from flashinfer.testing.utils import bench_gpu_time_with_cuda_event

TASKS = [
    ("gqa_paged", "gqa_paged_decode_h24_kv8_d128_ps1"),
    ("gqa_paged", "gqa_paged_prefill_causal_h24_kv8_d128_ps1"),
    ("gqa_ragged", "gqa_ragged_prefill_causal_h32_kv4_d128"),
]


def load_inputs(tasks_dir, family, name):
    definition = json.load(open(f"{tasks_dir}/definitions/{family}/{name}.json"))
    workload = json.loads(open(f"{tasks_dir}/workloads/{family}/{name}.jsonl").readline())
    axes = {k: v["value"] for k, v in definition["axes"].items() if v["type"] == "const"}
    axes.update(workload["workload"]["axes"])
    gen = torch.Generator(device="cuda").manual_seed(1234)
    inputs = {}
    for key, spec in workload["workload"]["inputs"].items():
        if spec["type"] == "scalar":
            inputs[key] = spec["value"]
        elif spec["type"] == "safetensors":
            blob = load_file(f"{tasks_dir}/{spec['path']}")
            inputs[key] = blob[spec["tensor_key"]].to("cuda")
        else:
            shape = [axes[a] for a in definition["inputs"][key]["shape"]]
            inputs[key] = torch.randn(shape, generator=gen, device="cuda", dtype=torch.bfloat16)
    return definition, axes, inputs


def attention_flops(q_lens, kv_lens, heads, head_dim):
    """QK^T and PV, 2 FLOPs per multiply-add; causal masks aligned bottom-right."""
    total = 0
    for q_len, kv_len in zip(q_lens, kv_lens):
        visible = sum(min(kv_len, kv_len - q_len + i + 1) for i in range(q_len))
        total += 4 * visible * heads * head_dim
    return total


def make_call(name, axes, x, workspace):
    heads, kv_heads, d = axes["num_qo_heads"], axes["num_kv_heads"], axes["head_dim"]
    common = dict(q_data_type=torch.bfloat16, kv_data_type=torch.bfloat16, sm_scale=x["sm_scale"])
    if "decode" in name:
        wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD")
        ones = torch.ones(axes["batch_size"], dtype=torch.int32, device="cuda")
        wrapper.plan(x["kv_indptr"], x["kv_indices"], ones, heads, kv_heads, d, 1, **common)
        kv_lens = (x["kv_indptr"][1:] - x["kv_indptr"][:-1]).tolist()
        flops = attention_flops([1] * len(kv_lens), kv_lens, heads, d)
        return (lambda: wrapper.run(x["q"], (x["k_cache"], x["v_cache"]), return_lse=True)), flops
    q_lens = (x["qo_indptr"][1:] - x["qo_indptr"][:-1]).tolist()
    kv_lens = (x["kv_indptr"][1:] - x["kv_indptr"][:-1]).tolist()
    flops = attention_flops(q_lens, kv_lens, heads, d)
    if "paged" in name:
        wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(workspace, "NHD", backend="fa3")
        ones = torch.ones(len(q_lens), dtype=torch.int32, device="cuda")
        wrapper.plan(x["qo_indptr"], x["kv_indptr"], x["kv_indices"], ones, heads, kv_heads, d, 1,
                     causal=True, **common)
        return (lambda: wrapper.run(x["q"], (x["k_cache"], x["v_cache"]), return_lse=True)), flops
    wrapper = flashinfer.BatchPrefillWithRaggedKVCacheWrapper(workspace, "NHD", backend="fa3")
    wrapper.plan(x["qo_indptr"], x["kv_indptr"], heads, kv_heads, d, causal=True, **common)
    return (lambda: wrapper.run(x["q"], x["k"], x["v"], return_lse=True)), flops


def check(definition, inputs, out, lse):
    scope = {}
    exec(definition["reference"], scope)
    args = [inputs[k] for k in definition["inputs"]]
    want_out, want_lse = scope["run"](*args)
    err_out = (out.float() - want_out.float()).abs()
    bad = (err_out > 0.01 + 0.01 * want_out.float().abs()).sum().item()
    finite = torch.isfinite(want_lse)
    err_lse = (lse[finite] - want_lse[finite]).abs().max().item()
    return {"failing_output_elements": bad, "max_abs_output_error": err_out.max().item(),
            "max_abs_lse_error": err_lse}


def event_median_ms(fn, flush, warmup=10, samples=100):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(samples):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    tasks_dir, out_path = sys.argv[1], sys.argv[2]
    workspace = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    for family, name in TASKS:
        row = {"task": name}
        try:
            definition, axes, inputs = load_inputs(tasks_dir, family, name)
            t0 = time.time()
            fn, flops = make_call(name, axes, inputs, workspace)
            out, lse = fn()
            torch.cuda.synchronize()
            row["plan_and_jit_s"] = round(time.time() - t0, 1)
            row["check"] = check(definition, inputs, out, lse)
            fi_times = bench_gpu_time_with_cuda_event(fn, repeat_iters=200, cold_l2_cache=True)
            row["flashinfer_bench_median_ms"] = statistics.median(fi_times)
            row["event_flush_median_ms"] = event_median_ms(fn, flush)
            row["flops"] = flops
        except Exception as error:  # one task's failure must not lose the others' figures
            row["error"] = f"{type(error).__name__}: {error}"
        rows.append(row)
        print(json.dumps(row), flush=True)
    json.dump({"flashinfer": flashinfer.__version__, "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name(), "rows": rows}, open(out_path, "w"), indent=1)
    print(f"\nFlashInfer {flashinfer.__version__} (Python API), {torch.cuda.get_device_name()}\n")
    print("| task | bench_gpu_time_with_cuda_event ms | CUDA events + 512 MiB flush ms | "
          "TFLOP/s | failing elements | max abs lse error |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['task']} | error: {r['error'][:200]} | | | | |")
            continue
        tf = r["flops"] / (r["event_flush_median_ms"] * 1e-3) / 1e12
        print(f"| {r['task']} | {r['flashinfer_bench_median_ms']:.4f} | "
              f"{r['event_flush_median_ms']:.4f} | {tf:.1f} | "
              f"{r['check']['failing_output_elements']} | {r['check']['max_abs_lse_error']:.2e} |")
    return 1 if any("error" in r or r["check"]["failing_output_elements"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
