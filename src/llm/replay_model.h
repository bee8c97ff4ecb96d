// The built-in `replay` model: answers every turn with a kernel read from disk, so the whole
// pipeline (prompt, extraction, evaluation, feedback, run directory, report) runs with no API
// key and no network. `<dir>/replay.json` names, per task, the kernels of turns 1, 2, ...; turns
// beyond the list repeat the last one. An entry is a path or a variant {"source", "defines"}
// (llm/solution_render.h), answered rendered: defines in front, local headers inlined. The task is
// read from the conversation itself (the first user message's "# Task: NAME" line) and the turn
// from the number of assistant messages, so replay is an ordinary ModelClient. Replies are prose
// plus one ```cuda block, like a model's.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "llm/model_client.h"
#include "llm/solution_render.h"

namespace ptxb {

class ReplayModel final : public ModelClient {
 public:
  // Reads and checks `<dir>/replay.json` and renders every kernel it names.
  static Result<std::unique_ptr<ReplayModel>> load(const std::string& dir);
  Result<ModelReply> complete(const std::vector<ChatMessage>& messages) override;

  // What replay answers with for `task` at 1-based `turn`: the variant and its rendered kernel
  // (the one file a model would submit; tests and `ptxbench tasks solution` use it too).
  Result<SolutionVariant> kernel_variant(const std::string& task, int turn) const;
  Result<std::string> kernel_source(const std::string& task, int turn) const;
  // The tasks with kernels, and how many turns each lists.
  std::map<std::string, std::size_t> turn_counts() const;

 private:
  struct Kernel {
    SolutionVariant variant;
    std::string source;  // rendered
  };
  Result<const Kernel*> kernel(const std::string& task, int turn) const;

  std::string dir_;
  std::map<std::string, std::vector<Kernel>> kernels_;  // task -> kernels, turn order
};

// Default replay folder: the data folder's solutions/ (core/install_layout.h).
Result<std::string> default_replay_dir();

}  // namespace ptxb
