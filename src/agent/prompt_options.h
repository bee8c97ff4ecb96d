// Prompt options of `ptxbench run`: what is added to what the model reads, beyond the paper
// protocol (docs/agent.md "Prompt options"; docs/adaptation.md "Prompt-time baselines"). All
// off by default, which is the paper protocol.
//
//   guidance        expert guidance text appended to the task message: one FILE for every task,
//                   or a DIR holding TASK.md per task (every planned task needs its file)
//   retrieval       NOTES.jsonl (`ptxbench fixit notes`): on a failing turn, the top-k notes of
//                   the same task (adapt/notes_retrieval.h) appended to the feedback
//   retrieval_mode  notes | notes+kernel (the best note's fixed kernel too)
//   retrieval_top_k 1..10, default 3
//   profiler_hints  eval/feedback.h FeedbackOptions::profiler_hints
//
// The options are a field of the experiment ("prompt" in EXP.json, the --guidance, --retrieval,
// --retrieval-mode, --retrieval-top-k and --profiler-hints flags), so plan.json keeps them and
// a resumed run uses them again; when any is on they are part of the plan's identity, so a run
// directory is never resumed under other options. PromptAids is their loaded form: the guidance
// text per task and the notes index, with the sha256 of each file as recorded in every
// trajectory and turn.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapt/notes_retrieval.h"
#include "core/json_io.h"
#include "core/result.h"
#include "eval/feedback.h"

namespace ptxb {

// Guidance longer than this is refused: it is read on every turn of every trajectory.
inline constexpr std::size_t kMaxGuidanceBytes = 32768;
inline constexpr int kMaxRetrievalTopK = 10;

struct PromptOptions {
  std::string guidance;
  std::string retrieval;
  adapt::RetrievalMode retrieval_mode = adapt::RetrievalMode::kNotes;
  int retrieval_top_k = 3;
  bool profiler_hints = false;

  bool is_default() const;
  // Errors name the JSON path under `path` ("$.prompt.retrieval_mode: ...").
  static Result<PromptOptions> from_json(const Json& json, const std::string& path);
  Json to_json() const;
};

struct TaskGuidance {
  std::string file;  // where the text came from
  std::string text;
  std::string sha256;
};

class PromptAids {
 public:
  PromptAids() = default;
  // Reads the guidance of every task in `tasks` and the notes file; a missing guidance file,
  // an empty or over-long one, and a damaged notes file are usage errors.
  static Result<PromptAids> load(const PromptOptions& options,
                                 const std::vector<std::string>& tasks);

  // The task message with the task's guidance appended (unchanged without guidance).
  std::string with_guidance(const std::string& task, const std::string& first_user) const;
  // The retrieval for a failing turn's kernel; nullopt when retrieval is off.
  std::optional<adapt::Retrieval> retrieve(const std::string& task,
                                           const std::string& failing_source) const;
  FeedbackOptions feedback_options() const;
  // The options with the sha256 of what they read ("guidance_sha256", "notes_sha256"), as the
  // trajectory and turn files record them.
  Json record(const std::string& task) const;

 private:
  PromptOptions options_;
  std::map<std::string, TaskGuidance> guidance_;  // by task
  std::string notes_sha256_;
  std::shared_ptr<const adapt::NotesRetriever> retriever_;
};

}  // namespace ptxb
