// The built-in `replay` model: answers every turn with a kernel read from disk, so the whole
// pipeline (prompt, extraction, evaluation, feedback, run directory, report) runs with no API
// key and no network. `<dir>/replay.json` names, per task, the kernels of turns 1, 2, ...; turns
// beyond the list repeat the last one. The task is read from the conversation itself (the first
// user message's "# Task: NAME" line) and the turn from the number of assistant messages, so
// replay is an ordinary ModelClient. Replies are prose plus one ```cuda block, like a model's.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "llm/model_client.h"

namespace ptxb {

class ReplayModel final : public ModelClient {
 public:
  // Reads and checks `<dir>/replay.json` and every kernel it names.
  static Result<std::unique_ptr<ReplayModel>> load(const std::string& dir);
  Result<ModelReply> complete(const std::vector<ChatMessage>& messages) override;

  // The kernel file replay answers with for `task` at 1-based `turn`.
  Result<std::string> kernel_path(const std::string& task, int turn) const;

 private:
  std::string dir_;
  std::map<std::string, std::vector<std::string>> kernels_;  // task -> paths, turn order
};

// Default replay folder: the data folder's solutions/ (core/install_layout.h).
Result<std::string> default_replay_dir();

}  // namespace ptxb
