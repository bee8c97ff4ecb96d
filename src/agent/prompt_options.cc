#include "agent/prompt_options.h"

#include <algorithm>

#include "core/fs.h"
#include "core/json_fields.h"
#include "core/sha256.h"
#include "core/strings.h"

namespace ptxb {
namespace {

Result<TaskGuidance> read_guidance(const std::string& file) {
  auto read = read_file(file, kMaxGuidanceBytes);
  if (!read.ok())
    return make_error("usage", "guidance (at most {} bytes): {}", kMaxGuidanceBytes,
                      read.error().message);
  const std::string& text = read.value();
  if (trim(text).empty()) return make_error("usage", "{}: empty guidance", file);
  return TaskGuidance{file, trim(text), sha256_hex(text)};
}

}  // namespace

bool PromptOptions::is_default() const {
  return guidance.empty() && retrieval.empty() && !profiler_hints;
}

Result<PromptOptions> PromptOptions::from_json(const Json& json, const std::string& path) {
  PromptOptions options;
  if (!json.is_object()) return make_error("config", "{}: expected an object", path);
  static const std::vector<std::string> kKnown = {"guidance", "retrieval", "retrieval_mode",
                                                  "retrieval_top_k", "profiler_hints"};
  for (const auto& [key, value] : json.items())
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end())
      return make_error("config", "{}: unknown field (known: {})", json_path_key(path, key),
                        join(kKnown, ", "));
  std::optional<std::string> guidance, retrieval;
  std::string mode = adapt::retrieval_mode_name(options.retrieval_mode);
  FieldReader r(json, path);
  r.optional("guidance", guidance)
      .optional("retrieval", retrieval)
      .optional("retrieval_mode", mode);
  r.optional("retrieval_top_k", options.retrieval_top_k);
  r.optional("profiler_hints", options.profiler_hints);
  if (!r.status().ok()) return make_error("config", "{}", r.status().error().message);
  options.guidance = guidance.value_or("");
  options.retrieval = retrieval.value_or("");
  auto parsed_mode = adapt::parse_retrieval_mode(mode);
  if (!parsed_mode.ok())
    return make_error("config", "{}: {}", json_path_key(path, "retrieval_mode"),
                      parsed_mode.error().message);
  options.retrieval_mode = parsed_mode.value();
  if (options.retrieval_top_k < 1 || options.retrieval_top_k > kMaxRetrievalTopK)
    return make_error("config", "{}: expected an integer from 1 to {}",
                      json_path_key(path, "retrieval_top_k"), kMaxRetrievalTopK);
  return options;
}

Json PromptOptions::to_json() const {
  return Json{{"guidance", guidance.empty() ? Json(nullptr) : Json(guidance)},
              {"retrieval", retrieval.empty() ? Json(nullptr) : Json(retrieval)},
              {"retrieval_mode", adapt::retrieval_mode_name(retrieval_mode)},
              {"retrieval_top_k", retrieval_top_k},
              {"profiler_hints", profiler_hints}};
}

Result<PromptAids> PromptAids::load(const PromptOptions& options,
                                    const std::vector<std::string>& tasks) {
  PromptAids aids;
  aids.options_ = options;
  if (!options.guidance.empty()) {
    if (!path_exists(options.guidance))
      return make_error("usage", "guidance {}: no such file or directory", options.guidance);
    const bool per_task = is_directory(options.guidance);
    for (const std::string& task : tasks) {
      std::string file = options.guidance;
      if (per_task) {
        file = options.guidance + "/" + task + ".md";
        if (!path_exists(file)) file = options.guidance + "/" + task + ".txt";
        if (!path_exists(file))
          return make_error("usage", "guidance {}: no {}.md or {}.txt for task {}",
                            options.guidance, task, task, task);
      }
      PTXB_ASSIGN_OR_RETURN(aids.guidance_[task], read_guidance(file));
    }
  }
  if (!options.retrieval.empty()) {
    auto notes = adapt::read_notes(options.retrieval);
    if (!notes.ok()) return make_error("usage", "--retrieval: {}", notes.error().message);
    PTXB_ASSIGN_OR_RETURN(std::string bytes, read_file(options.retrieval, kMaxJsonFileBytes));
    aids.notes_sha256_ = sha256_hex(bytes);
    aids.retriever_ = std::make_shared<const adapt::NotesRetriever>(
        std::move(notes).value(), options.retrieval_mode,
        static_cast<std::size_t>(options.retrieval_top_k));
  }
  return aids;
}

std::string PromptAids::with_guidance(const std::string& task,
                                      const std::string& first_user) const {
  auto it = guidance_.find(task);
  if (it == guidance_.end()) return first_user;
  return first_user + "\n\n## Expert guidance\n" + it->second.text + "\n";
}

std::optional<adapt::Retrieval> PromptAids::retrieve(const std::string& task,
                                                     const std::string& failing_source) const {
  if (!retriever_) return std::nullopt;
  return retriever_->retrieve(task, failing_source);
}

FeedbackOptions PromptAids::feedback_options() const {
  FeedbackOptions feedback;
  feedback.profiler_hints = options_.profiler_hints;
  return feedback;
}

Json PromptAids::record(const std::string& task) const {
  Json json = options_.to_json();
  auto it = guidance_.find(task);
  json["guidance_sha256"] = it == guidance_.end() ? Json(nullptr) : Json(it->second.sha256);
  json["notes_sha256"] = notes_sha256_.empty() ? Json(nullptr) : Json(notes_sha256_);
  return json;
}

}  // namespace ptxb
