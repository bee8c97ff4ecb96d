// The fine-tuning records (docs/adaptation.md "Record formats").
//
// chat-jsonl, one object per line, messages in the OpenAI chat format that TRL, LLaMA-Factory
// and Axolotl read, each message with a boolean "loss" (the loss mask: true on the last
// assistant message only):
//   Fixit (5 messages)     system, user task, assistant failing kernel, user its exact
//                          feedback, assistant "<think>analysis\n\nplan</think>" + fixed kernel
//   KernelGen (3 messages) system, user task, assistant "<think>…</think>" + kernel
// four-part: {"id", "kind", "task", "wrong_code", "analysis", "plan", "correct_code"}.
//
// Rows longer than max_tokens (65,536, the reference recipe's limit) are dropped. A row's
// length is the sum over its messages of their content's tokens: estimated by
// packs/token_estimate.h's ceil(bytes / 3.5), calibrated on the Qwen tokenizer, or counted
// exactly by the model's own tokenizer.json (`--tokenizer`, bpe_tokenizer.h). The chat
// template's tokens (<|im_start|>role\n … <|im_end|>\n, 5 per message for Qwen) are not
// counted: the limit leaves room for them (docs/adaptation.md).
// Held-out tasks and rows whose fixed kernel has the canonical source of a test kernel
// (source_tokens.h) are dropped too, and the manifest names the colliding kernel.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "adapt/bpe_tokenizer.h"
#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::adapt {

inline constexpr std::size_t kMaxSftTokens = 65536;

struct SftExample {
  std::string id;
  std::string kind;  // "fixit" or "kernelgen"
  std::string task;
  std::string system;
  std::string task_message;
  std::string wrong_kernel;  // fixit only
  std::string feedback;      // fixit only
  std::string analysis;
  std::string plan;
  std::string fixed_kernel;
};

struct ExportOptions {
  std::string format = "chat-jsonl";  // or "four-part"
  std::size_t max_tokens = kMaxSftTokens;
  const BpeTokenizer* tokenizer = nullptr;  // counts tokens exactly when set, else estimated
  std::uint64_t seed = 0;                   // shuffle seed
  std::set<std::string> holdout_tasks;
  // canonical source hash -> where that test kernel comes from ("RUN_DIR turns/ID/turn3.cu")
  std::map<std::string, std::string> test_kernels;
};

struct ExportResult {
  std::string jsonl;  // the records, shuffled
  Json manifest;      // counts, drops with reasons, sha256 of every part of every row
};

std::string final_answer(const SftExample& example);  // "<think>…</think>\n\n```cuda …```"
Json chat_row(const SftExample& example);
Json four_part_row(const SftExample& example);
std::size_t estimated_tokens(const Json& chat_row);
std::size_t tokenizer_tokens(const Json& chat_row, const BpeTokenizer& tokenizer);

Result<ExportResult> export_records(std::vector<SftExample> examples, const ExportOptions& options);

}  // namespace ptxb::adapt
