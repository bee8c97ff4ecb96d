// MiniPTXAgent: the multi-turn loop of one trajectory (design.md §3.7, §5).
//
//   system prompt (role + knowledge pack of the variant + ABI) and the task as the first user
//   message; then for each turn t = 1..T:
//     model reply -> kernel extraction (kernel_extract.h) -> EvalRequest -> TurnEvaluator ->
//     feedback (eval/feedback.h, or the no-code message) as the next user message
//   keeping the whole history. Prompt options (prompt_options.h) append expert guidance to the
//   task message and, on a failing turn, retrieved notes of earlier fixes to the feedback. Every
//   turn is run (the paper's protocol) unless early stop is configured and reached.
//
// Each finished turn is committed to the run directory (run_directory.h) before the next
// begins; run() first rebuilds the conversation from the directory, so it continues any
// trajectory from its first unfinished turn. Trajectory end states (info.exit_status):
//   completed, target_reached (early stop), context_window_exceeded   final
//   model_error, eval_error, io_error, running                        resumable
#pragma once

#include <string>
#include <vector>

#include "agent/experiment.h"
#include "agent/progress.h"
#include "agent/run_directory.h"
#include "agent/turn_evaluator.h"
#include "core/semaphore.h"
#include "llm/model_client.h"
#include "packs/prompt_builder.h"

namespace ptxb {

// The first two messages of every trajectory of one (task, variant), and the `run` signature
// the no-code feedback repeats.
struct TaskPrompt {
  std::string task;
  std::string system;
  std::string first_user;
  std::string signature;
  // Messages every trajectory continues from after the task, before its first turn (a Fixit
  // repair, adapt/repair_loop.h: the failing kernel as the assistant's reply, then its feedback
  // with the repair instruction); trajectory-format messages (role, content, extra). Empty for
  // `ptxbench run`.
  std::vector<Json> opening;
};

struct TrajectoryOutcome {
  std::string exit_status;
  std::string detail;  // the error, for the unfinished states
  int turns_done = 0;
  bool finished() const;
};

bool is_final_exit_status(const std::string& exit_status);

// The outcome of a trajectory that a Ctrl-C or SIGTERM stopped (core/interrupt.h): unfinished,
// nothing recorded, resumed by the next run.
inline constexpr const char* kInterruptedExitStatus = "interrupted";

struct AgentServices {
  RunDirectory& run_dir;
  Semaphore& model_slots;     // concurrency.model
  EvaluatorPool& evaluators;  // concurrency.gpu
  RunProgress& progress;
  // Guidance, retrieval and feedback options (prompt_options.h); null: none (the paper
  // protocol, and the Fixit repairs).
  const PromptAids* prompt_aids = nullptr;
};

class MiniPtxAgent {
 public:
  MiniPtxAgent(const ExperimentConfig& config, AgentServices services)
      : config_(config), services_(services) {}

  // Runs (or continues) one trajectory to its end state. Never throws; I/O errors end it as
  // io_error.
  TrajectoryOutcome run(const TrajectoryPlan& plan, const ModelConfig& model_config,
                        ModelClient& model, const TaskPrompt& prompt);

 private:
  const ExperimentConfig& config_;
  AgentServices services_;
};

// Format of trajectories/<id>.json: mini-swe-agent's "mini-swe-agent-1.1" (a `messages` array
// in the OpenAI chat format, each message with an `extra` object, and an `info` object).
inline constexpr const char* kTrajectoryFormat = "mini-swe-agent-1.1";

}  // namespace ptxb
