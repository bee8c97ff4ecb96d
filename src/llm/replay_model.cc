#include "llm/replay_model.h"

#include <algorithm>
#include <regex>

#include "core/install_layout.h"
#include "core/json_io.h"
#include "core/strings.h"
#include "packs/token_estimate.h"

namespace ptxb {
namespace {

// The kernel's own first comment line ("// PTXBench expert reference, task ..., rung 1: ..."),
// past the #defines a variant puts in front.
std::string headline(const std::string& source) {
  for (const auto& line : split_lines(source)) {
    const std::string text = trim(line);
    if (starts_with(text, "//")) return trim(text.substr(2));
    if (!text.empty() && !starts_with(text, "#define ")) break;
  }
  return "";
}

}  // namespace

Result<std::string> default_replay_dir() {
  return data_subdir("solutions");
}

Result<std::unique_ptr<ReplayModel>> ReplayModel::load(const std::string& dir) {
  const std::string path = dir + "/replay.json";
  PTXB_ASSIGN_OR_RETURN(Json json, read_json_file(path));
  if (!json.is_object() || json.value("format", "") != "ptxbench-replay/1")
    return make_error("config", "{}: $.format: expected \"ptxbench-replay/1\"", path);
  if (!json.contains("tasks") || !json["tasks"].is_object())
    return make_error("config", "{}: $.tasks: expected an object (task name -> kernel files)",
                      path);
  auto model = std::unique_ptr<ReplayModel>(new ReplayModel());
  model->dir_ = dir;
  for (const auto& [task, files] : json["tasks"].items()) {
    const std::string where = json_path_key("$.tasks", task);
    if (!files.is_array() || files.empty())
      return make_error("config", "{}: {}: expected a non-empty array of kernels", path, where);
    for (std::size_t i = 0; i < files.size(); ++i) {
      const std::string at = json_path_index(where, i);
      auto variant = parse_solution_variant(files[i], at);
      if (!variant.ok()) return variant.error().with_context(path);
      auto source = render_solution(dir, variant.value());
      if (!source.ok()) return source.error().with_context(fmt::format("{}: {}", path, at));
      // A fence inside the kernel would end the reply's code block early.
      if (contains(source.value(), "```"))
        return make_error("config", "{}: {}: {} contains ``` and cannot be sent in a fenced block",
                          path, at, variant->describe());
      model->kernels_[task].push_back({variant.value(), source.value()});
    }
  }
  return model;
}

Result<const ReplayModel::Kernel*> ReplayModel::kernel(const std::string& task, int turn) const {
  auto it = kernels_.find(task);
  if (it == kernels_.end())
    return make_error("config", "replay: {}/replay.json names no kernel for task {}", dir_, task);
  const auto& files = it->second;
  const std::size_t index =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(turn, 1)), files.size()) - 1;
  return &files[index];
}

Result<SolutionVariant> ReplayModel::kernel_variant(const std::string& task, int turn) const {
  PTXB_ASSIGN_OR_RETURN(const Kernel* found, kernel(task, turn));
  return found->variant;
}

Result<std::string> ReplayModel::kernel_source(const std::string& task, int turn) const {
  PTXB_ASSIGN_OR_RETURN(const Kernel* found, kernel(task, turn));
  return found->source;
}

std::map<std::string, std::size_t> ReplayModel::turn_counts() const {
  std::map<std::string, std::size_t> counts;
  for (const auto& [task, files] : kernels_) counts[task] = files.size();
  return counts;
}

Result<ModelReply> ReplayModel::complete(const std::vector<ChatMessage>& messages) {
  std::string task;
  int turn = 1;
  static const std::regex kTaskLine(R"((^|\n)# Task: (\S+))");
  for (const auto& message : messages) {
    std::smatch match;
    if (task.empty() && message.role == "user" &&
        std::regex_search(message.content, match, kTaskLine))
      task = match[2].str();
    if (message.role == "assistant") ++turn;
  }
  if (task.empty())
    return make_error("config", "replay: no \"# Task: NAME\" line in the conversation");
  PTXB_ASSIGN_OR_RETURN(const Kernel* found, kernel(task, turn));
  const std::string& source = found->source;
  const std::size_t listed = kernels_.at(task).size();
  ModelReply reply;
  reply.content = fmt::format(
      "Turn {} (replay): this answer is `{}` from the replay folder, kernel {} of {} listed for "
      "{}{}.\n\n{}\n\n```cuda\n{}{}```\n",
      turn, found->variant.describe(),
      std::min<std::size_t>(static_cast<std::size_t>(turn), listed), listed, task,
      static_cast<std::size_t>(turn) > listed ? " (the list is exhausted, so the last one again)"
                                              : "",
      headline(source).empty() ? "The kernel follows." : "About it: " + headline(source), source,
      ends_with(source, "\n") ? "" : "\n");
  reply.finish_reason = "stop";
  reply.served_model = "replay";
  // No tokenizer here: the bytes/3.5 estimate used for prompt sizes.
  std::size_t prompt_bytes = 0;
  for (const auto& message : messages) prompt_bytes += message.content.size();
  reply.usage.prompt = static_cast<std::int64_t>(approx_tokens_for_bytes(prompt_bytes));
  reply.usage.completion = static_cast<std::int64_t>(approx_tokens(reply.content));
  return reply;
}

}  // namespace ptxb
