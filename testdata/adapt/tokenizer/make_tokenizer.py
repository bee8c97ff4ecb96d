#!/usr/bin/env python3
"""Makes tokenizer.json and golden_ids.json for tests/adapt/bpe_tokenizer_test.cc.

tokenizer.json: a small byte-level BPE (vocab 2000) trained by the Hugging Face `tokenizers`
library on this repository's CUDA solutions, PTX goldens and docs, shaped like Qwen2's: NFC
normalizer, a Split with Qwen2's regex then ByteLevel (no prefix space, no regex), and Qwen's
special tokens. golden_ids.json: the library's ids for varied strings, under that tokenizer and
under variants that differ only in the pre-tokenizer (GPT-2's ByteLevel split with and without
the prefix space, Llama 3's regex), which the C++ test builds the same way.

  python3 -m venv /tmp/tokvenv && /tmp/tokvenv/bin/pip install tokenizers
  /tmp/tokvenv/bin/python testdata/adapt/tokenizer/make_tokenizer.py
"""
import json
import pathlib

import tokenizers
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
         r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3 = QWEN2.replace(r"\p{N}|", r"\p{N}{1,3}|")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def corpus():
    files = sorted(ROOT.glob("solutions/**/*.cu")) + sorted(ROOT.glob("testdata/adapt/ptx/*.ptx"))
    files += sorted(ROOT.glob("docs/*.md"))
    return [f.read_text() for f in files]


def train():
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus(), trainer)
    return tok


def variants(tok_json):
    """name -> the pre_tokenizer JSON of each variant (the C++ test swaps it in)."""
    split = {"type": "Split", "pattern": {"Regex": LLAMA3}, "behavior": "Isolated",
             "invert": False}
    byte_level = tok_json["pre_tokenizer"]["pretokenizers"][1]
    gpt2 = dict(byte_level, use_regex=True)
    return {
        "qwen2": tok_json["pre_tokenizer"],
        "llama3": {"type": "Sequence", "pretokenizers": [split, byte_level]},
        "gpt2": gpt2,
        "gpt2_prefix_space": dict(gpt2, add_prefix_space=True),
    }


def cases():
    solution = (ROOT / "solutions/gemm_n7168_k5120/rung1_tma_wgmma.cu").read_text()[:1500]
    return [
        "",
        "__global__ void add(float* a, const float* b, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] += b[i];\n}\n",
        "\tmov.u32 \t%r1, %tid.x;\n\tld.global.f32 \t%f2, [%rd4+128];\n"
        "\tsetp.ne.s32 \t%p1, %r1, 0;\n@%p1 bra $L__BB0_2;",
        "We're sure they've said it's the kernel's fault, isn't it? I'm told you'll see I'd do.",
        "WE'RE HERE, THEY'VE GONE, IT'S OK; 'S 'Ll 'rE don'T",
        "12345 and 3.14159, 2^10=1024; 0x7fff 1e-5f x=1;y=22;z=333;w=4444",
        "a    b\t\t  c   \n   d     ",
        "line one\r\nline two\r\n\r\n  indented\n\n\nend\r\n",
        "\tfor (int k = 0; k < 64; ++k)\n\t\tacc += x[k];\n",
        "caf\u00e9 r\u00e9sum\u00e9 na\u00efve \u2192 \u2190 \u2264 \u2265 \u00d7 \u00f7 "
        "\u00b5s \u03b1 \u03b2 \u03b3 \u03a9 \u0416\u0438\u0437\u043d\u044c",
        "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 \ud55c\uad6d\uc5b4 \u4e2d\u6587 "
        "\U0001f680\u2728",
        "<|im_start|>user\nFix this kernel<|im_end|>\n<|im_start|>assistant\n",
        "foo<|endoftext|>bar <|im_end|><|im_start|>",
        "   ",
        "\n",
        "==================== //////// ---- });\n\n}\r\n",
        "## Heading\n- item **bold** `code`\n> quote (see docs/adaptation.md)",
        " hello 42 world  \n  bye",
        "a\u00a0b\u3000c\u2003d",
        "x\u00b2 + y\u00b3 = \u00bd \u2460\u2461 \u0663\u0664",
        "it'\u017f fine 'S",
        "QK\u1d40 and \u03a3(C\u1d62I\u1d62)/N, \U0001d431 \u2208 \u211d\u207f",
        "asm volatile(\"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1}, %2, %3;\" : \"+f\"(d[0]) : \"l\"(desc_a));",
        solution,
    ]


def main():
    tok = train()
    path = HERE / "tokenizer.json"
    tok.save(str(path), pretty=False)
    tok_json = json.loads(path.read_text())
    golden = {"tokenizers_version": tokenizers.__version__, "variants": variants(tok_json),
              "cases": []}
    encoders = {}
    for name, pre in golden["variants"].items():
        encoders[name] = Tokenizer.from_str(json.dumps(dict(tok_json, pre_tokenizer=pre)))
    for text in cases():
        golden["cases"].append({"text": text, "ids": {
            name: enc.encode(text, add_special_tokens=False).ids
            for name, enc in encoders.items()}})
    # One line per case: diffs show which string changed.
    head = json.dumps({k: v for k, v in golden.items() if k != "cases"}, ensure_ascii=False)
    lines = ",\n".join(json.dumps(case, ensure_ascii=False) for case in golden["cases"])
    (HERE / "golden_ids.json").write_text(head[:-1] + ',\n"cases": [\n' + lines + "\n]}\n")
    print(f"{path}: {path.stat().st_size} bytes, vocab {tok.get_vocab_size()}")


if __name__ == "__main__":
    main()
