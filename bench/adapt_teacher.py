#!/usr/bin/env python3
"""The scripted reasoning teacher of the adaptation round (bench/adapt_round.sh).

A loopback OpenAI-compatible server (POST /v1/chat/completions) that answers `ptxbench fixit
reason` with a fixed first-person rationale per bug of testdata/adapt/student (README.md there),
recognised by the failing kernel quoted in the request. It never quotes the fixed kernel, so
the rationale check of src/adapt/rationale.h keeps it. An unknown request gets an answer
without the <analysis>/<plan> tags, which `fixit reason` rejects and counts (`malformed`):
a new student variant without a rationale here shows up in the counts, not as a made-up row.
Usage: adapt_teacher.py PORT_FILE  (binds 127.0.0.1 on a free port and writes it to PORT_FILE)
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

# (marker in the failing kernel, analysis, plan). The markers are the edited lines.
RATIONALES = [
    ("SmemSwizzle::k64B>(smem_b)",
     "I read the numerical failure: the output is wrong everywhere, not only at the edges, so "
     "the operands are misread rather than misindexed. The TMA map of B writes 128-byte swizzled "
     "rows, but the wgmma descriptor I built for B declares the 64-byte swizzle, so the tensor "
     "cores apply another XOR pattern and read B's rows scrambled.",
     "I make the descriptor of B use the same 128-byte swizzle as its TMA map, exactly like the "
     "descriptor of A, and change nothing else: the pipeline, the tile shape and the epilogue "
     "were already right."),
    ("kt < kKTiles - 1",
     "I read the numerical failure: every element is off by a similar amount, which is what a "
     "missing slice of the K reduction looks like. My main loop stops one k-tile early, so the "
     "last 64 columns of K are loaded by TMA but never multiplied into the accumulators.",
     "I run the main loop over all k-tiles. The producer already issues every load and the "
     "barrier phases already count every tile, so the bound of the loop is the only change."),
    ("lse[h] = m_run[h] + log2f(l);",
     "I read the failure: O matches but the LSE output does not, and its error grows with the "
     "value itself. I keep the running max and the row sum in base 2 because the scores are "
     "prescaled by log2(e), but I wrote the log-sum-exp without converting it back to the "
     "natural log the task asks for.",
     "I multiply the base-2 log-sum-exp by ln 2 when I write it, as the constant I already "
     "defined says; the softmax itself and O stay as they are."),
]
FENCE = ("The harness reported a wrong result that depends on timing: the P and rescaled O "
         "registers are written by ordinary instructions and then read by the asynchronous "
         "wgmma of the P·V product. Without a wgmma.fence between them nothing orders those "
         "writes before the tensor cores read the registers, so some rows see stale values.",
         "I put the warpgroup fence back before the P·V wgmma, right after the rescale, so the "
         "register writes are ordered before the asynchronous reads; nothing else changes.")


def answer_for(body):
    text = json.dumps(body)
    if "<analysis>" not in text:
        return "I only write rationales."
    for marker, analysis, plan in RATIONALES:
        if json.dumps(marker)[1:-1] in text:
            return f"<analysis>{analysis}</analysis>\n<plan>{plan}</plan>"
    if "mha_with_lse_d128" in text:
        return f"<analysis>{FENCE[0]}</analysis>\n<plan>{FENCE[1]}</plan>"
    return "I do not recognise this kernel."


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        reply = {"id": "adapt-teacher", "object": "chat.completion", "model": "adapt-teacher",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": answer_for(body)}}],
                 "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()
