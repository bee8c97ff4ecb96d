// Prompt assembly for MiniPTXAgent's first turn (design.md §5).
//
// System prompt = role and response format + the knowledge pack of the variant + the solution
// ABI (design.md §3.2) with the exact `run` signature. First user message = the task: the
// definition JSON without `tags`, the workload's axis values, the tolerance and the target
// speedup. Later user messages (turn feedback) are the agent's business, not this file's.
//
// The builder takes a plain PromptTask rather than the task registry's type, so it is tested
// with hand-made definitions and the CLI adapts a registry task to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "packs/pack_library.h"
#include "trace/definition.h"

namespace ptxb {

struct PromptTask {
  Definition definition;
  std::string arch;  // "sm_90a" or "sm_100a": picks the pack and the compile target
  // The evaluated workload's axis values in definition order (const axes included).
  std::vector<std::pair<std::string, std::int64_t>> axis_values;
  double atol = 1e-2;
  double rtol = 1e-2;
  double target_speedup = 1.2;
  std::string reference;  // human name of the library baseline ("cuBLASLt"); may be empty
};

struct PromptSize {
  std::size_t bytes = 0;
  std::size_t approx_tokens = 0;
};

struct Prompt {
  std::string system;
  std::string first_user;
  std::string arch;
  std::string pack;     // "hopper"
  std::string variant;  // the tag
  std::vector<ComposedFragment> fragments;
  PromptSize system_size;
  PromptSize first_user_size;
  PromptSize pack_size;  // the knowledge-pack part of the system prompt alone
  PromptSize total_size;
  std::vector<std::string> warnings;  // from composition; callers print them
};

// Builds the exact system prompt and first user message for one task and variant tag.
Result<Prompt> build_prompt(const PackLibrary& library, const PromptTask& task,
                            const std::string& variant);

// The definition as the model sees it: the document as read, without "tags" (tags are
// benchmark bookkeeping, not part of the problem).
Json definition_for_prompt(const Definition& definition);

// Machine-readable form for `ptxbench prompt --json`.
Json prompt_to_json(const Prompt& prompt);

}  // namespace ptxb
