// `ptxbench fixit reason`: a reasoning teacher writes a first-person rationale from a failure to
// its fix, in two parts (<analysis> what the feedback shows and why the kernel fails, <plan> the
// minimal change), never quoting the fixed kernel. An answer is checked before it is kept:
//   malformed            no <analysis>…</analysis> and <plan>…</plan>
//   too_short, too_long  outside [min_chars, max_chars] (both parts together)
//   quotes_fixed_kernel  a code block, or a line of the fixed kernel (≥ 30 characters, not in
//                        the failing kernel) copied into the text: the rationale must explain the
//                        fix, not carry it, or the SFT row would supervise the kernel twice
// A rejected answer is asked again up to `attempts` times; then the item is dropped with the
// last reason. A teacher call that fails after the client's own retries leaves the item
// undecided (reported, continued by the next run). Commit point: WORK/rationales.jsonl
// (outcome_log.h).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "llm/model_client.h"

namespace ptxb::adapt {

struct RationaleItem {
  std::string id;
  std::string task_message;
  std::string wrong_kernel;  // "" for a KernelGen item (no failure before it)
  std::string feedback;      // "" for a KernelGen item
  std::string fixed_kernel;
};

struct Rationale {
  std::string analysis;
  std::string plan;
};

struct RationaleOptions {
  int min_chars = 200;
  int max_chars = 8000;
  int attempts = 3;
};

struct RationaleSummary {
  int kept = 0, dropped = 0, already_decided = 0;
  std::map<std::string, int> rejected_answers;  // every rejected answer, by reason
  std::map<std::string, int> dropped_by_reason;
  std::vector<std::string> unfinished;
  Json to_json() const;
};

std::vector<ChatMessage> rationale_request(const RationaleItem& item);
// The rationale, or an Error whose code is the rejection reason above.
Result<Rationale> check_rationale(const std::string& answer, const RationaleItem& item,
                                  const RationaleOptions& options);

Result<RationaleSummary> write_rationales(const std::vector<RationaleItem>& items,
                                          const RationaleOptions& options, ModelClient& teacher,
                                          const std::string& log_path);

}  // namespace ptxb::adapt
