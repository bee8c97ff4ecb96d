// Finding the kernel in a model's answer (design.md §5, the reference implementation's rule): the
// LAST fenced code block tagged `cuda`, `cpp` or `c++` that contains a definition of the host
// function `run`. Earlier blocks are drafts or excerpts; a block that only calls or declares
// `run` is not the kernel. When there is none, the reason says what the reply held instead, so
// the model's next message can be a precise request (no_code_feedback).
#pragma once

#include <string>
#include <vector>

namespace ptxb {

struct FencedBlock {
  std::string tag;     // first word of the info string, lower-cased ("cuda", "python", "")
  std::string body;    // the lines between the fences
  bool closed = true;  // false: the reply ended inside the block (cut off at max_tokens?)
};

struct ExtractedKernel {
  bool found = false;
  std::string source;
  std::string no_code_reason;    // when !found: one sentence
  int blocks = 0;                // fenced blocks in the reply
  int kernel_tagged_blocks = 0;  // tagged cuda / cpp / c++
  int chosen_block = -1;         // 0-based index among all blocks, -1 when none
};

// Fenced blocks (``` or ~~~, CommonMark rules: up to 3 spaces of indentation, a closing fence
// of the same character at least as long) in order.
std::vector<FencedBlock> fenced_blocks(const std::string& text);

// Whether `source` defines (not merely declares or calls) a free function named `run`;
// comments and string literals are ignored.
bool defines_run(const std::string& source);

ExtractedKernel extract_kernel(const std::string& reply);

// The user message that answers a reply without a kernel: the reason and the exact request.
std::string no_code_feedback(const ExtractedKernel& extracted, const std::string& signature,
                             const std::string& finish_reason);

}  // namespace ptxb
