# Dev-time generator of the built-in task set (tasks/). The harness never runs Python; this
# script only records how definitions, workloads, blobs and tasks.json were produced.
# Usage: python3 tasks/tools/generate_builtin_set.py   (then review the diff; see docs/tasks.md)
import json, math, os, uuid, struct, random
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = uuid.UUID("6f1d2c3a-8e4b-4f0a-9b7c-2d5e6a7b8c9d")

def dump(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(json.dumps(obj, indent=2) + "\n")

GEMM_REF = """import torch

def run(A, B):
    # C = A @ B^T, accumulated in fp32 and rounded once to bf16.
    return (A.float() @ B.float().T).to(torch.bfloat16)
"""

def fwd_ref(causal):
    mask = ("    seq = Q.shape[2]\n    keep = torch.ones(seq, seq, dtype=torch.bool, device=Q.device).tril()\n"
            "    logits = logits.masked_fill(~keep, float(\"-inf\"))\n") if causal else ""
    return ("import math\nimport torch\n\ndef run(Q, K, V):\n"
            "    # Q, K, V: [B, H, S, D] bf16. Softmax scale 1/sqrt(D); LSE is the natural-log\n"
            "    # logsumexp of the scaled logits, one value per query row.\n"
            "    scale = 1.0 / math.sqrt(Q.shape[-1])\n"
            "    logits = torch.matmul(Q.float(), K.float().transpose(-1, -2)) * scale\n" + mask +
            "    LSE = torch.logsumexp(logits, dim=-1)\n"
            "    O = torch.matmul(torch.exp(logits - LSE.unsqueeze(-1)), V.float())\n"
            "    return O.to(torch.bfloat16), LSE\n")

def bwd_ref(causal):
    mask = ("    seq = Q.shape[2]\n    keep = torch.ones(seq, seq, dtype=torch.bool, device=Q.device).tril()\n"
            "    logits = logits.masked_fill(~keep, float(\"-inf\"))\n") if causal else ""
    return ("import math\nimport torch\n\ndef run(Q, K, V, O, dO, L):\n"
            "    # Gradients of O = softmax(Q K^T / sqrt(d)) V given dO; L is the forward's\n"
            "    # natural-log logsumexp per query row, so P is rebuilt without a new max pass.\n"
            "    scale = 1.0 / math.sqrt(Q.shape[-1])\n"
            "    q, k, v, o, do = (t.float() for t in (Q, K, V, O, dO))\n"
            "    logits = torch.matmul(q, k.transpose(-1, -2)) * scale\n" + mask +
            "    P = torch.exp(logits - L.unsqueeze(-1))\n"
            "    dV = torch.matmul(P.transpose(-1, -2), do)\n"
            "    dP = torch.matmul(do, v.transpose(-1, -2))\n"
            "    delta = (do * o).sum(dim=-1, keepdim=True)\n"
            "    dS = P * (dP - delta)\n"
            "    dQ = torch.matmul(dS, k) * scale\n"
            "    dK = torch.matmul(dS.transpose(-1, -2), q) * scale\n"
            "    return dQ.to(torch.bfloat16), dK.to(torch.bfloat16), dV.to(torch.bfloat16)\n")

def t(shape, dtype="bfloat16", desc=None):
    d = {"shape": shape, "dtype": dtype}
    if desc: d["description"] = desc
    return d

defs = {}   # name -> (op_type, definition)
def gemm_def():
    return {"name": "gemm_n7168_k5120", "op_type": "gemm",
        "description": "C = A @ B^T in bf16 with fp32 accumulation (N=7168, K=5120).",
        "tags": ["status:verified", "suite:paper-h100"],
        "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 7168}, "K": {"type": "const", "value": 5120}},
        "inputs": {"A": t(["M", "K"]), "B": t(["N", "K"])},
        "outputs": {"C": t(["M", "N"])},
        "reference": GEMM_REF}

def fwd_def(dim, causal):
    name = f"mha_with_lse_d{dim}" + ("_causal" if causal else "")
    return {"name": name, "op_type": "mha",
        "description": f"Multi-head attention forward, head dim {dim}{', causal (lower-triangular) mask' if causal else ''}; returns O and the natural-log LSE of QK^T/sqrt(D).",
        "tags": ["status:verified", "stage:forward"] + (["mask:causal"] if causal else []),
        "axes": {"B": {"type": "const", "value": 4}, "H": {"type": "const", "value": 48},
                 "D": {"type": "const", "value": dim}, "S": {"type": "var"}},
        "inputs": {"Q": t(["B", "H", "S", "D"]), "K": t(["B", "H", "S", "D"]), "V": t(["B", "H", "S", "D"])},
        "outputs": {"O": t(["B", "H", "S", "D"]), "LSE": t(["B", "H", "S"], "float32", "natural-log logsumexp of each scaled logit row")},
        "reference": fwd_ref(causal)}

def bwd_def(dim, causal):
    name = f"mha_bwd_d{dim}" + ("_causal" if causal else "")
    return {"name": name, "op_type": "mha",
        "description": f"Multi-head attention backward, head dim {dim}{', causal mask' if causal else ''}: dQ, dK, dV from Q, K, V, the forward's O and LSE (L), and dO.",
        "tags": ["status:verified", "stage:backward"] + (["mask:causal"] if causal else []),
        "axes": {"B": {"type": "const", "value": 4}, "H": {"type": "const", "value": 48},
                 "d": {"type": "const", "value": dim}, "S": {"type": "var"}},
        "inputs": {"Q": t(["B", "H", "S", "d"]), "K": t(["B", "H", "S", "d"]), "V": t(["B", "H", "S", "d"]),
                   "O": t(["B", "H", "S", "d"], desc="forward output"), "dO": t(["B", "H", "S", "d"]),
                   "L": t(["B", "H", "S"], "float32", "forward natural-log LSE")},
        "outputs": {"dQ": t(["B", "H", "S", "d"]), "dK": t(["B", "H", "S", "d"]), "dV": t(["B", "H", "S", "d"])},
        "reference": bwd_ref(causal)}

DECODE_REF = """import math
import torch

def run(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale):
    # Request b attends with its single query token to the pages
    # kv_indices[kv_indptr[b]:kv_indptr[b+1]]; query head h reads KV head h // group.
    # lse is base 2 (log2 of the sum of exponentials), as FlashInfer returns it.
    batch_size, num_qo_heads, head_dim = q.shape
    num_kv_heads = k_cache.shape[2]
    group = num_qo_heads // num_kv_heads
    keys = k_cache.reshape(-1, num_kv_heads, head_dim).float()
    values = v_cache.reshape(-1, num_kv_heads, head_dim).float()
    output = torch.zeros_like(q)
    lse = torch.full((batch_size, num_qo_heads), -math.inf, dtype=torch.float32, device=q.device)
    for b in range(batch_size):
        pages = kv_indices[kv_indptr[b]:kv_indptr[b + 1]].long()
        if pages.numel() == 0:
            continue
        k = keys[pages].repeat_interleave(group, dim=1)
        v = values[pages].repeat_interleave(group, dim=1)
        logits = torch.einsum("hd,lhd->hl", q[b].float(), k) * sm_scale
        lse[b] = torch.logsumexp(logits, dim=-1) / math.log(2.0)
        output[b] = torch.einsum("hl,lhd->hd", torch.softmax(logits, dim=-1), v).to(q.dtype)
    return output, lse
"""

def prefill_ref(paged):
    args = "q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, sm_scale" if paged else "q, k, v, qo_indptr, kv_indptr, sm_scale"
    fetch = ("        pages = kv_indices[kv_indptr[b]:kv_indptr[b + 1]].long()\n"
             "        k = keys[pages].repeat_interleave(group, dim=1)\n"
             "        v = values[pages].repeat_interleave(group, dim=1)\n") if paged else (
             "        k = keys[kv_indptr[b]:kv_indptr[b + 1]].repeat_interleave(group, dim=1)\n"
             "        v = values[kv_indptr[b]:kv_indptr[b + 1]].repeat_interleave(group, dim=1)\n")
    kv_src = "k_cache" if paged else "k"
    v_src = "v_cache" if paged else "v"
    return ("import math\nimport torch\n\ndef run(" + args + "):\n"
            "    # Request b owns query rows qo_indptr[b]:qo_indptr[b+1] and its keys; the causal\n"
            "    # mask is aligned bottom-right (query i of q_len sees keys up to kv_len - q_len + i).\n"
            "    # lse is base 2, as FlashInfer returns it.\n"
            "    total_q, num_qo_heads, head_dim = q.shape\n"
            f"    num_kv_heads = {kv_src}.shape[-2]\n"
            "    group = num_qo_heads // num_kv_heads\n"
            f"    keys = {kv_src}.reshape(-1, num_kv_heads, head_dim).float()\n"
            f"    values = {v_src}.reshape(-1, num_kv_heads, head_dim).float()\n"
            "    output = torch.zeros_like(q)\n"
            "    lse = torch.full((total_q, num_qo_heads), -math.inf, dtype=torch.float32, device=q.device)\n"
            "    for b in range(qo_indptr.shape[0] - 1):\n"
            "        q_begin, q_end = int(qo_indptr[b]), int(qo_indptr[b + 1])\n" + fetch +
            "        q_len, kv_len = q_end - q_begin, k.shape[0]\n"
            "        if q_len == 0 or kv_len == 0:\n"
            "            continue\n"
            "        logits = torch.einsum(\"qhd,khd->hqk\", q[q_begin:q_end].float(), k) * sm_scale\n"
            "        rows = torch.arange(q_len, device=q.device).unsqueeze(1)\n"
            "        cols = torch.arange(kv_len, device=q.device).unsqueeze(0)\n"
            "        logits = logits.masked_fill(cols > rows + (kv_len - q_len), float(\"-inf\"))\n"
            "        lse[q_begin:q_end] = (torch.logsumexp(logits, dim=-1) / math.log(2.0)).transpose(0, 1)\n"
            "        probs = torch.softmax(logits, dim=-1)\n"
            "        output[q_begin:q_end] = torch.einsum(\"hqk,khd->qhd\", probs, v).to(q.dtype)\n"
            "    return output, lse\n")

def gqa_decode_def():
    return {"name": "gqa_paged_decode_h24_kv8_d128_ps1", "op_type": "gqa_paged",
        "description": "Batched GQA decode over a paged KV cache (page size 1): 24 query heads share 8 KV heads, head dim 128.",
        "tags": ["stage:decode", "status:verified", "fi_api:flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper"],
        "axes": {"batch_size": {"type": "var"}, "num_qo_heads": {"type": "const", "value": 24},
                 "num_kv_heads": {"type": "const", "value": 8}, "head_dim": {"type": "const", "value": 128},
                 "num_pages": {"type": "var"}, "page_size": {"type": "const", "value": 1},
                 "len_indptr": {"type": "var"}, "num_kv_indices": {"type": "var"}},
        "constraints": ["len_indptr == batch_size + 1", "num_kv_indices == kv_indptr[-1].item()"],
        "inputs": {"q": t(["batch_size", "num_qo_heads", "head_dim"]),
                   "k_cache": t(["num_pages", "page_size", "num_kv_heads", "head_dim"]),
                   "v_cache": t(["num_pages", "page_size", "num_kv_heads", "head_dim"]),
                   "kv_indptr": t(["len_indptr"], "int32"), "kv_indices": t(["num_kv_indices"], "int32"),
                   "sm_scale": t(None, "float32", "softmax scale, 1/sqrt(head_dim)")},
        "outputs": {"output": t(["batch_size", "num_qo_heads", "head_dim"]),
                    "lse": t(["batch_size", "num_qo_heads"], "float32", "base-2 logsumexp")},
        "reference": DECODE_REF}

def gqa_paged_prefill_def():
    return {"name": "gqa_paged_prefill_causal_h24_kv8_d128_ps1", "op_type": "gqa_paged",
        "description": "Batched causal GQA prefill over a paged KV cache (page size 1): 24 query heads share 8 KV heads, head dim 128.",
        "tags": ["stage:prefill", "status:verified", "mask:causal", "fi_api:flashinfer.prefill.BatchPrefillWithPagedKVCacheWrapper"],
        "axes": {"num_qo_heads": {"type": "const", "value": 24}, "num_kv_heads": {"type": "const", "value": 8},
                 "head_dim": {"type": "const", "value": 128}, "page_size": {"type": "const", "value": 1},
                 "len_indptr": {"type": "var"}, "total_q": {"type": "var"},
                 "num_kv_indices": {"type": "var"}, "num_pages": {"type": "var"}},
        "constraints": ["total_q == qo_indptr[-1].item()", "num_kv_indices == kv_indptr[-1].item()"],
        "inputs": {"q": t(["total_q", "num_qo_heads", "head_dim"]),
                   "k_cache": t(["num_pages", "page_size", "num_kv_heads", "head_dim"]),
                   "v_cache": t(["num_pages", "page_size", "num_kv_heads", "head_dim"]),
                   "qo_indptr": t(["len_indptr"], "int32"), "kv_indptr": t(["len_indptr"], "int32"),
                   "kv_indices": t(["num_kv_indices"], "int32"),
                   "sm_scale": t(None, "float32", "softmax scale, 1/sqrt(head_dim)")},
        "outputs": {"output": t(["total_q", "num_qo_heads", "head_dim"]),
                    "lse": t(["total_q", "num_qo_heads"], "float32", "base-2 logsumexp")},
        "reference": prefill_ref(True)}

def gqa_ragged_prefill_def():
    return {"name": "gqa_ragged_prefill_causal_h32_kv4_d128", "op_type": "gqa_ragged",
        "description": "Batched causal GQA prefill over ragged (packed) K/V: 32 query heads share 4 KV heads, head dim 128.",
        "tags": ["stage:prefill", "status:verified", "mask:causal", "fi_api:flashinfer.prefill.BatchPrefillWithRaggedKVCacheWrapper"],
        "axes": {"num_qo_heads": {"type": "const", "value": 32}, "num_kv_heads": {"type": "const", "value": 4},
                 "head_dim": {"type": "const", "value": 128}, "len_indptr": {"type": "var"},
                 "total_q": {"type": "var"}, "total_kv": {"type": "var"}},
        "constraints": ["total_q == qo_indptr[-1].item()", "total_kv == kv_indptr[-1].item()"],
        "inputs": {"q": t(["total_q", "num_qo_heads", "head_dim"]),
                   "k": t(["total_kv", "num_kv_heads", "head_dim"]),
                   "v": t(["total_kv", "num_kv_heads", "head_dim"]),
                   "qo_indptr": t(["len_indptr"], "int32"), "kv_indptr": t(["len_indptr"], "int32"),
                   "sm_scale": t(None, "float32", "softmax scale, 1/sqrt(head_dim)")},
        "outputs": {"output": t(["total_q", "num_qo_heads", "head_dim"]),
                    "lse": t(["total_q", "num_qo_heads"], "float32", "base-2 logsumexp")},
        "reference": prefill_ref(False)}

def write_safetensors(path, tensors):
    # tensors: list of (name, list[int]) all int32
    header = {}
    data = b""
    for name, values in tensors:
        raw = struct.pack("<%di" % len(values), *values)
        header[name] = {"dtype": "I32", "shape": [len(values)], "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)

PUBLISHED = {"gemm_n7168_k5120": "94920358-01a8-4c5b-9209-3103fd490e94",
             "mha_with_lse_d128": "bc38b351-d595-451b-9153-8e225702e53b",
             "mha_with_lse_d128_causal": "6d2f67a7-225a-4af5-87d3-cbb99b496325",
             "mha_bwd_d128": "38c3b07c-f006-5f5e-9860-ba214c805a6b",
             "mha_bwd_d128_causal": "c119b3f0-c051-5e96-9c2a-2268d992fe1a"}

workloads = {}  # def name -> workload line
def add_def(d):
    defs[d["name"]] = d
    dump(f"{ROOT}/definitions/{d['op_type']}/{d['name']}.json", d)

def our_uuid(name, axes):
    return str(uuid.uuid5(NS, name + json.dumps(axes, sort_keys=True)))

def add_dense_workload(d, axes):
    name = d["name"]
    wid = PUBLISHED.get(name) or our_uuid(name, axes)
    inputs = {}
    for inp in d["inputs"]:
        spec = {"type": "random"}
        if d["name"].startswith("mha_bwd") and inp in ("O", "L"):
            spec["ptxbench"] = {"derive": "reference_forward"}
        inputs[inp] = spec
    workloads[name] = {"definition": name, "workload": {"uuid": wid, "axes": axes, "inputs": inputs}}

add_def(gemm_def()); add_dense_workload(defs["gemm_n7168_k5120"], {"M": 8192})
for dim in (128, 64, 96):
    for causal in (False, True):
        d = fwd_def(dim, causal); add_def(d); add_dense_workload(d, {"S": 4096})
        d = bwd_def(dim, causal); add_def(d); add_dense_workload(d, {"S": 4096})

SCALE = 1.0 / math.sqrt(128)
rng = random.Random(20260101)
# decode: 32 requests x 2048 cached tokens each, pages in a seeded random order.
d = gqa_decode_def(); add_def(d)
batch, kv_len = 32, 2048
pages = list(range(batch * kv_len)); rng.shuffle(pages)
axes = {"batch_size": batch, "num_pages": batch * kv_len, "len_indptr": batch + 1, "num_kv_indices": batch * kv_len}
wid = our_uuid(d["name"], axes)
blob = f"blob/workloads/gqa_paged/{d['name']}/{wid}.safetensors"
write_safetensors(f"{ROOT}/{blob}", [("kv_indptr", [i * kv_len for i in range(batch + 1)]), ("kv_indices", pages)])
workloads[d["name"]] = {"definition": d["name"], "workload": {"uuid": wid, "axes": axes, "inputs": {
    "q": {"type": "random"}, "k_cache": {"type": "random"}, "v_cache": {"type": "random"},
    "kv_indptr": {"type": "safetensors", "path": blob, "tensor_key": "kv_indptr"},
    "kv_indices": {"type": "safetensors", "path": blob, "tensor_key": "kv_indices"},
    "sm_scale": {"type": "scalar", "value": SCALE}}}}
# paged prefill: 4 requests x 1024 tokens, as many queries as keys.
d = gqa_paged_prefill_def(); add_def(d)
batch, seq = 4, 1024
pages = list(range(batch * seq)); rng.shuffle(pages)
axes = {"len_indptr": batch + 1, "total_q": batch * seq, "num_kv_indices": batch * seq, "num_pages": batch * seq}
wid = our_uuid(d["name"], axes)
blob = f"blob/workloads/gqa_paged/{d['name']}/{wid}.safetensors"
indptr = [i * seq for i in range(batch + 1)]
write_safetensors(f"{ROOT}/{blob}", [("qo_indptr", indptr), ("kv_indptr", indptr), ("kv_indices", pages)])
workloads[d["name"]] = {"definition": d["name"], "workload": {"uuid": wid, "axes": axes, "inputs": {
    "q": {"type": "random"}, "k_cache": {"type": "random"}, "v_cache": {"type": "random"},
    "qo_indptr": {"type": "safetensors", "path": blob, "tensor_key": "qo_indptr"},
    "kv_indptr": {"type": "safetensors", "path": blob, "tensor_key": "kv_indptr"},
    "kv_indices": {"type": "safetensors", "path": blob, "tensor_key": "kv_indices"},
    "sm_scale": {"type": "scalar", "value": SCALE}}}}
# ragged prefill: 4 requests x 2048 tokens.
d = gqa_ragged_prefill_def(); add_def(d)
batch, seq = 4, 2048
axes = {"len_indptr": batch + 1, "total_q": batch * seq, "total_kv": batch * seq}
wid = our_uuid(d["name"], axes)
blob = f"blob/workloads/gqa_ragged/{d['name']}/{wid}.safetensors"
indptr = [i * seq for i in range(batch + 1)]
write_safetensors(f"{ROOT}/{blob}", [("qo_indptr", indptr), ("kv_indptr", indptr)])
workloads[d["name"]] = {"definition": d["name"], "workload": {"uuid": wid, "axes": axes, "inputs": {
    "q": {"type": "random"}, "k": {"type": "random"}, "v": {"type": "random"},
    "qo_indptr": {"type": "safetensors", "path": blob, "tensor_key": "qo_indptr"},
    "kv_indptr": {"type": "safetensors", "path": blob, "tensor_key": "kv_indptr"},
    "sm_scale": {"type": "scalar", "value": SCALE}}}}

for name, line in workloads.items():
    op = defs[name]["op_type"]
    path = f"{ROOT}/workloads/{op}/{name}.jsonl"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(json.dumps(line) + "\n")

GEMM_V = ["base", "base+cluster_multicast", "base+warp_specialization"]
FWD_V = ["base", "base+fa3_fwd", "base+fa3_fwd_overlap"]
BWD_V = ["base", "base+two_kernel_bwd", "base+two_kernel_bwd_fwd_context"]
HOPPER = ["GMMA", "TMA"]; BLACKWELL = ["UTC", "LDTM", "STTM"]
def entry(task, suite, dname, arch, backend, variants, cost):
    e = {"name": task, "suites": [suite], "definition": dname,
         "workload_uuid": workloads[dname]["workload"]["uuid"], "arch": arch,
         "target_families": HOPPER if arch == "sm_90a" else BLACKWELL,
         "reference_backend": backend, "tolerance": {"atol": 0.01, "rtol": 0.01},
         "prompt_variants": variants, "target_speedup": 1.2, "cost_model": cost}
    if dname in PUBLISHED: e["source_workload_uuid"] = PUBLISHED[dname]
    return e
def paper(dim, suite, arch, suffix=""):
    out = []
    for causal in (False, True):
        c = "_causal" if causal else ""
        n = f"mha_with_lse_d{dim}{c}"
        out.append(entry(n + suffix, suite, n, arch, "cudnn_sdpa_fwd", FWD_V, "attention_fwd" + c))
    for causal in (False, True):
        c = "_causal" if causal else ""
        n = f"mha_bwd_d{dim}{c}"
        out.append(entry(n + suffix, suite, n, arch, "cudnn_sdpa_bwd", BWD_V, "attention_bwd" + c))
    return out
tasks = [entry("gemm_n7168_k5120", "paper-h100", "gemm_n7168_k5120", "sm_90a", "cublaslt_gemm", GEMM_V, "gemm")]
tasks += paper(128, "paper-h100", "sm_90a")
tasks += paper(64, "heldout-h100", "sm_90a") + paper(96, "heldout-h100", "sm_90a")
tasks.append(entry("gqa_paged_decode_h24_kv8_d128_ps1", "heldout-h100", "gqa_paged_decode_h24_kv8_d128_ps1", "sm_90a", "flashinfer_gqa_paged_decode", ["base"], "gqa_paged_decode"))
tasks.append(entry("gqa_paged_prefill_causal_h24_kv8_d128_ps1", "heldout-h100", "gqa_paged_prefill_causal_h24_kv8_d128_ps1", "sm_90a", "flashinfer_gqa_paged_prefill", ["base"], "gqa_paged_prefill_causal"))
tasks.append(entry("gqa_ragged_prefill_causal_h32_kv4_d128", "heldout-h100", "gqa_ragged_prefill_causal_h32_kv4_d128", "sm_90a", "flashinfer_gqa_ragged_prefill", ["base"], "gqa_ragged_prefill_causal"))
tasks.append(entry("gemm_n7168_k5120_sm100a", "paper-b200", "gemm_n7168_k5120", "sm_100a", "cublaslt_gemm", GEMM_V, "gemm"))
tasks += paper(128, "paper-b200", "sm_100a", "_sm100a")
dump(f"{ROOT}/tasks.json", {"format": "ptxbench-tasks/1",
     "description": "PTXBench built-in task suites: paper-h100 (the paper's five tasks, docs/design.md §4), heldout-h100, paper-b200. See docs/tasks.md.",
     "tasks": tasks})
print(len(tasks), "tasks")
