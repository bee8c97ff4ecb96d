#include "agent/mini_ptx_agent.h"

#include <chrono>

#include "agent/kernel_extract.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/json_fields.h"
#include "core/version.h"
#include "eval/feedback.h"

namespace ptxb {
namespace {

// An evaluation that failed as infrastructure (the supervisor crashed or hung; not a skipped GPU
// stage, which is a fact about this machine) is run once more before the turn records it.
constexpr int kEvalAttempts = 2;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct TrajectoryState {
  std::vector<Json> messages;  // trajectory-format messages (role, content, extra, ...)
  int turns_done = 0;
  int api_calls = 0;
  ModelUsage tokens;
  std::string submission;  // the last extracted kernel
  std::optional<TurnRecord> last_record;
};

std::vector<ChatMessage> chat_messages(const std::vector<Json>& messages) {
  std::vector<ChatMessage> chat;
  chat.reserve(messages.size());
  // Only role and content go back to the model: earlier reasoning is not resent (APIs that
  // expose it reject or ignore it in the history).
  for (const auto& m : messages) chat.push_back({m.value("role", ""), m.value("content", "")});
  return chat;
}

// Adds one committed turn (turns/<id>/turn<N>.json) to a resumed trajectory's state.
Status restore_turn(const RunDirectory& dir, const std::string& id, int turn, const Json& detail,
                    TrajectoryState& state) {
  Json assistant, feedback, model, record;
  std::optional<std::string> kernel_file;  // null when the reply held no kernel
  FieldReader r(detail);
  r.required("assistant_message", assistant).required("feedback_message", feedback);
  r.required("model", model).required("record", record).optional("kernel_file", kernel_file);
  PTXB_RETURN_IF_ERROR(r.status());
  int attempts = 0;
  Json usage;
  FieldReader m(model, r.path_of("model"));
  m.required("attempts", attempts).required("usage", usage);
  PTXB_RETURN_IF_ERROR(m.status());
  TokenUsage tokens;
  FieldReader u(usage, m.path_of("usage"));
  u.required("prompt", tokens.prompt).required("completion", tokens.completion);
  u.required("reasoning", tokens.reasoning);
  PTXB_RETURN_IF_ERROR(u.status());
  PTXB_ASSIGN_OR_RETURN(TurnRecord last, TurnRecord::from_json(record));
  state.messages.push_back(std::move(assistant));
  state.messages.push_back(std::move(feedback));
  state.api_calls += attempts;
  state.tokens.prompt += tokens.prompt;
  state.tokens.completion += tokens.completion;
  state.tokens.reasoning += tokens.reasoning;
  // The kernel itself may have been moved out of the run directory: then the next turn's
  // prompt has no previous submission, as after a reply without code.
  if (kernel_file) {
    auto kernel = read_file(dir.kernel_file(id, turn), 16u << 20);
    if (kernel.ok()) state.submission = kernel.value();
  }
  state.last_record = std::move(last);
  return ok_status();
}

// A turn whose kernel the model can fix: not passed, and not a failure of the harness.
bool is_failing_turn(PtxbStatus status) {
  return status != PtxbStatus::kPassed && status != PtxbStatus::kInfraError &&
         status != PtxbStatus::kInvalidReference;
}

bool reached_target(const TurnRecord& record, const std::optional<double>& early_stop) {
  return early_stop && record.correct() &&
         record.target_instructions == std::string(kInstDynamicPresent) && record.speedup &&
         *record.speedup >= *early_stop;
}

}  // namespace

bool is_final_exit_status(const std::string& exit_status) {
  return exit_status == "completed" || exit_status == "target_reached" ||
         exit_status == "context_window_exceeded";
}

bool TrajectoryOutcome::finished() const {
  return is_final_exit_status(exit_status);
}

TrajectoryOutcome MiniPtxAgent::run(const TrajectoryPlan& plan, const ModelConfig& model_config,
                                    ModelClient& model, const TaskPrompt& prompt) {
  RunDirectory& dir = services_.run_dir;
  static const PromptAids kNoPromptAids;
  const PromptAids& aids = services_.prompt_aids ? *services_.prompt_aids : kNoPromptAids;
  const Json prompt_record = aids.record(plan.task);
  TrajectoryState state;

  auto document = [&](const std::string& exit_status, const std::string& detail) {
    Json agent{{"task", plan.task},
               {"variant", plan.variant},
               {"turns", config_.turns},
               {"early_stop_speedup",
                config_.early_stop_speedup ? Json(*config_.early_stop_speedup) : Json(nullptr)},
               {"eval", config_.eval.to_json()},
               {"prompt", prompt_record}};
    Json key{{"model", plan.key.model},           {"arch", plan.key.arch},
             {"definition", plan.key.definition}, {"workload", plan.key.workload},
             {"variant", plan.key.variant},       {"trajectory", plan.key.trajectory}};
    Json info{{"exit_status", exit_status},
              {"submission", state.submission},
              {"model_stats", {{"instance_cost", 0.0}, {"api_calls", state.api_calls}}},
              {"config",
               {{"agent", agent},
                {"agent_type", "ptxbench.MiniPTXAgent"},
                {"model", model_config.to_json()},
                {"model_type", "ptxbench.llm." + model_config.api}}},
              {"mini_version", std::string("ptxbench ") + harness_version()},
              {"ptxbench",
               {{"id", plan.id},
                {"key", key},
                {"workload_name", plan.workload_name},
                {"turns_done", state.turns_done},
                {"turns_planned", config_.turns},
                {"end_detail", detail},
                {"tokens",
                 {{"prompt", state.tokens.prompt},
                  {"completion", state.tokens.completion},
                  {"reasoning", state.tokens.reasoning}}},
                {"updated", iso_utc_now()}}}};
    return Json{
        {"info", info}, {"messages", state.messages}, {"trajectory_format", kTrajectoryFormat}};
  };
  auto end = [&](const std::string& exit_status, const std::string& detail) {
    auto written = dir.write_trajectory(plan.id, document(exit_status, detail));
    TrajectoryOutcome outcome{exit_status, detail, state.turns_done};
    if (!written.ok()) outcome = {"io_error", written.error().message, state.turns_done};
    services_.progress.trajectory_done(plan, outcome.exit_status, outcome.detail);
    return outcome;
  };
  auto io_failure = [&](const Error& error) {
    TrajectoryOutcome outcome{"io_error", error.message, state.turns_done};
    services_.progress.trajectory_done(plan, outcome.exit_status, outcome.detail);
    return outcome;
  };

  // ---- rebuild the conversation from the run directory ----
  const std::set<int> finished = dir.finished_turns(plan.id);
  while (finished.count(state.turns_done + 1)) ++state.turns_done;
  if (finished.size() != static_cast<std::size_t>(state.turns_done))
    return io_failure(make_error("io", "turns.jsonl has turns of {} after a missing turn {}",
                                 plan.id, state.turns_done + 1));
  auto saved = dir.read_trajectory(plan.id);
  if (!saved.ok()) return io_failure(saved.error());
  if (saved.value() && saved.value()->contains("messages") &&
      (*saved.value())["messages"].size() >= 2) {
    const Json& doc = *saved.value();
    const Json info =
        doc.contains("info") && doc["info"].is_object() ? doc["info"] : Json::object();
    const std::string status = info.contains("exit_status") && info["exit_status"].is_string()
                                   ? info["exit_status"].get<std::string>()
                                   : "";
    const Json ptxbench = info.contains("ptxbench") && info["ptxbench"].is_object()
                              ? info["ptxbench"]
                              : Json::object();
    const int done = ptxbench.contains("turns_done") && ptxbench["turns_done"].is_number_integer()
                         ? ptxbench["turns_done"].get<int>()
                         : -1;
    if (is_final_exit_status(status) && done == state.turns_done) {
      return TrajectoryOutcome{status, "", done};  // nothing left to do
    }
    // The prompt the trajectory started with, even if the packs changed since.
    const std::size_t prefix = std::min(doc["messages"].size(), 2 + prompt.opening.size());
    state.messages.assign(doc["messages"].begin(),
                          doc["messages"].begin() + static_cast<std::ptrdiff_t>(prefix));
  } else {
    state.messages = {
        Json{
            {"role", "system"}, {"content", prompt.system}, {"extra", {{"kind", "system_prompt"}}}},
        Json{{"role", "user"},
             {"content", aids.with_guidance(plan.task, prompt.first_user)},
             {"extra", {{"kind", "task"}}}}};
    state.messages.insert(state.messages.end(), prompt.opening.begin(), prompt.opening.end());
  }
  for (int turn = 1; turn <= state.turns_done; ++turn) {
    auto detail = dir.read_turn_detail(plan.id, turn);
    if (!detail.ok()) return io_failure(detail.error());
    // Our own files, written by the loop below; a field missing or of another type means the
    // directory was edited or damaged.
    Status restored = restore_turn(dir, plan.id, turn, detail.value(), state);
    if (!restored.ok())
      return io_failure(make_error("io", "{}: turn {} detail is damaged: {}", plan.id, turn,
                                   restored.error().message));
  }
  if (state.last_record && reached_target(*state.last_record, config_.early_stop_speedup))
    return end("target_reached", "");

  // Ctrl-C (core/interrupt.h): the trajectory stops where it is and nothing of the turn in
  // flight is committed (its model call or evaluation was cut short); the next run redoes it.
  auto stopped = [&] {
    TrajectoryOutcome outcome{std::string(kInterruptedExitStatus), "", state.turns_done};
    services_.progress.trajectory_done(plan, outcome.exit_status, outcome.detail);
    return outcome;
  };

  // ---- the turns ----
  for (int turn = state.turns_done + 1; turn <= config_.turns; ++turn) {
    if (interrupted()) return stopped();
    const std::string started = iso_utc_now();
    services_.progress.phase(plan, turn, "model");
    Result<ModelReply> reply = [&] {
      Semaphore::Permit permit(services_.model_slots);
      return model.complete(chat_messages(state.messages));
    }();
    if (interrupted()) return stopped();
    if (!reply.ok()) {
      if (reply.error().code == kContextWindowError)
        return end("context_window_exceeded", reply.error().message);
      return end("model_error",
                 fmt::format("turn {}: {} [{}]", turn, reply.error().message, reply.error().code));
    }
    const ExtractedKernel extracted = extract_kernel(reply->content);

    TurnRecord record;
    record.key = plan.key;
    record.workload_name = plan.workload_name;
    record.turn = turn;
    record.model_wall_s = reply->wall_s;
    record.tokens = {reply->usage.prompt, reply->usage.completion, reply->usage.reasoning};
    std::string feedback;
    Json eval_json = nullptr, request_json = nullptr, retrieval_json = nullptr;
    int eval_attempts = 0;
    if (extracted.found) {
      EvalRequest request;
      request.task = plan.task;
      request.source_name = "kernel.cu";
      request.source = extracted.source;
      request.options = config_.eval;
      // The profiler hints need their metrics from the evaluation's one profiled call.
      if (aids.feedback_options().profiler_hints) request.options.profiler_hints = true;
      // Fresh inputs every turn (a model must not tune to one input set across turns), yet
      // reproducible: the seed follows from the base seed, the stable trajectory id and the
      // turn, so a resumed turn sees the same inputs as its cut-off attempt.
      request.options.seed =
          derive_set_seed(config_.eval.seed, fmt::format("{}#{}", plan.id, turn), 0);
      request_json = request.to_json();
      request_json.erase("source");
      request_json["source_file"] = fmt::format("turn{}.cu", turn);
      services_.progress.phase(plan, turn, "eval");
      Result<EvalResult> result = make_error("internal", "not evaluated");
      {
        auto lease = services_.evaluators.acquire();
        // A turn that waited for a GPU slot while Ctrl-C or SIGTERM (scancel) arrived starts no
        // evaluation: its result would be thrown away, and a service would queue it for nothing.
        if (interrupted()) return stopped();
        const auto eval_start = std::chrono::steady_clock::now();
        for (eval_attempts = 1; eval_attempts <= kEvalAttempts; ++eval_attempts) {
          result = lease->evaluator().evaluate_turn(
              request, fmt::format("{}#{}@{}", plan.id, turn, eval_attempts));
          if (!result.ok() || result->status != PtxbStatus::kInfraError || result->gpu_skipped)
            break;
          if (eval_attempts < kEvalAttempts)
            services_.progress.note(
                fmt::format("{} turn {}: evaluation infrastructure failure ({}); evaluating again",
                            plan.id, turn, result->message));
        }
        eval_attempts = std::min(eval_attempts, kEvalAttempts);
        record.eval_wall_s = seconds_since(eval_start);
      }
      if (interrupted()) return stopped();
      if (!result.ok())
        return end("eval_error", fmt::format("turn {}: {}", turn, result.error().message));
      record.kernel_present = true;
      record.status = result->status;
      record.reason = result->reason;
      if (!result->workloads.empty()) {
        const WorkloadEval& w = result->workloads.front();
        record.speedup = w.speedup;
        if (w.energy && w.energy->ratio) record.energy_ratio = w.energy->ratio;
        if (w.reference.also_reference)
          record.also_reference_speedup = w.reference.also_reference->speedup;
        if (w.speedup_interval) {
          record.speedup_low = w.speedup_interval->low;
          record.speedup_high = w.speedup_interval->high;
        }
      }
      record.target_instructions = result->target_instructions.verdict;
      feedback = render_feedback(result.value(), aids.feedback_options());
      if (is_failing_turn(result->status))
        if (auto retrieval = aids.retrieve(plan.task, extracted.source)) {
          if (!retrieval->text.empty()) feedback += "\n" + retrieval->text;
          retrieval_json = retrieval->to_json();
        }
      eval_json = result->to_json();
      state.submission = extracted.source;
    } else {
      record.kernel_present = false;
      record.no_code_reason = extracted.no_code_reason;
      feedback = no_code_feedback(extracted, prompt.signature, reply->finish_reason);
    }

    const std::string kernel_rel = fmt::format("turns/{}/turn{}.cu", plan.id, turn);
    Json assistant{{"role", "assistant"}, {"content", reply->content}};
    if (!reply->reasoning.empty()) assistant["reasoning_content"] = reply->reasoning;
    assistant["extra"] = {{"kind", "reply"},
                          {"turn", turn},
                          {"usage", reply->usage.to_json()},
                          {"finish_reason", reply->finish_reason},
                          {"wall_s", reply->wall_s},
                          {"attempts", reply->attempts}};
    Json observation{
        {"role", "user"},
        {"content", feedback},
        {"extra",
         {{"kind", "feedback"},
          {"turn", turn},
          {"status", record.status_name()},
          {"reason", record.kernel_present ? Json(record.reason) : Json(record.no_code_reason)},
          {"speedup", record.speedup ? Json(*record.speedup) : Json(nullptr)},
          {"target_instructions", record.target_instructions},
          {"kernel_file", extracted.found ? Json(kernel_rel) : Json(nullptr)}}}};
    if (!retrieval_json.is_null()) observation["extra"]["retrieval"] = retrieval_json;
    Json detail{
        {"format", "ptxbench-turn/1"},
        {"trajectory", plan.id},
        {"turn", turn},
        {"started", started},
        {"finished", iso_utc_now()},
        {"record", record.to_json()},
        {"model", reply->to_json()},
        {"extraction",
         {{"found", extracted.found},
          {"blocks", extracted.blocks},
          {"kernel_tagged_blocks", extracted.kernel_tagged_blocks},
          {"chosen_block", extracted.chosen_block},
          {"no_code_reason", extracted.found ? Json(nullptr) : Json(extracted.no_code_reason)}}},
        {"kernel_file", extracted.found ? Json(fmt::format("turn{}.cu", turn)) : Json(nullptr)},
        {"eval_request", request_json},
        {"eval_attempts", eval_attempts},
        {"eval", eval_json},
        {"feedback", feedback},
        {"prompt", prompt_record},
        {"retrieval", retrieval_json},
        {"assistant_message", assistant},
        {"feedback_message", observation}};

    // Commit: the turn's files, the conversation, then the record (run_directory.h).
    auto files =
        dir.write_turn_files(plan.id, turn, extracted.found ? &extracted.source : nullptr, detail);
    if (!files.ok()) return io_failure(files.error());
    state.messages.push_back(assistant);
    state.messages.push_back(observation);
    state.turns_done = turn;
    state.api_calls += reply->attempts;
    state.tokens.prompt += reply->usage.prompt;
    state.tokens.completion += reply->usage.completion;
    state.tokens.reasoning += reply->usage.reasoning;
    auto conversation = dir.write_trajectory(plan.id, document("running", ""));
    if (!conversation.ok()) return io_failure(conversation.error());
    auto committed = dir.append_turn(record);
    if (!committed.ok()) return io_failure(committed.error());
    services_.progress.turn_done(plan, record);
    if (reached_target(record, config_.early_stop_speedup)) return end("target_reached", "");
  }
  return end("completed", "");
}

}  // namespace ptxb
