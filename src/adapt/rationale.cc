#include "adapt/rationale.h"

#include <set>

#include "adapt/outcome_log.h"
#include "core/interrupt.h"
#include "core/strings.h"

namespace ptxb::adapt {
namespace {

// A copied line shorter than this is too generic to count as quoting (`}`, `__syncthreads();`).
constexpr std::size_t kMinQuotedLineChars = 30;

std::string between(const std::string& text, const std::string& open, const std::string& close,
                    bool& found) {
  const std::size_t start = text.find(open);
  const std::size_t end = start == std::string::npos ? start : text.find(close, start);
  found = start != std::string::npos && end != std::string::npos;
  return found ? trim(text.substr(start + open.size(), end - start - open.size())) : "";
}

}  // namespace

Json RationaleSummary::to_json() const {
  return Json{{"kept", kept},
              {"dropped", dropped},
              {"dropped_by_reason", dropped_by_reason},
              {"rejected_answers", rejected_answers},
              {"already_decided", already_decided},
              {"unfinished", unfinished}};
}

std::vector<ChatMessage> rationale_request(const RationaleItem& item) {
  std::string user = "The task:\n\n" + item.task_message + "\n\n";
  if (!item.wrong_kernel.empty())
    user += "A first attempt:\n\n```cuda\n" + item.wrong_kernel + "\n```\n\nWhat the harness " +
            "reported for it:\n\n" + item.feedback + "\n\n";
  user += "The correct kernel that ";
  user += item.wrong_kernel.empty() ? "solves the task" : "fixes it";
  user +=
      ":\n\n```cuda\n" + item.fixed_kernel +
      "\n```\n\nWrite, in the first person and as if you were working it out yourself before "
      "writing the kernel, the reasoning that leads to it: first "
      "<analysis>...</analysis> (what the feedback shows and why the attempt fails; for a task "
      "without an attempt, what the task and the hardware demand), then <plan>...</plan> (the "
      "change or design, precisely). Do not copy code from the correct kernel and write no code "
      "block.";
  return {{"system",
           "You are an expert GPU kernel engineer writing the thinking that precedes a kernel."},
          {"user", user}};
}

Result<Rationale> check_rationale(const std::string& answer, const RationaleItem& item,
                                  const RationaleOptions& options) {
  bool has_analysis = false, has_plan = false;
  Rationale r;
  r.analysis = between(answer, "<analysis>", "</analysis>", has_analysis);
  r.plan = between(answer, "<plan>", "</plan>", has_plan);
  if (!has_analysis || !has_plan || r.analysis.empty() || r.plan.empty())
    return make_error("malformed", "no <analysis> and <plan> parts");
  const std::size_t length = r.analysis.size() + r.plan.size();
  if (length < static_cast<std::size_t>(options.min_chars))
    return make_error("too_short", "{} characters, at least {} wanted", length, options.min_chars);
  if (length > static_cast<std::size_t>(options.max_chars))
    return make_error("too_long", "{} characters, at most {} allowed", length, options.max_chars);
  const std::string text = r.analysis + "\n" + r.plan;
  if (contains(text, "```")) return make_error("quotes_fixed_kernel", "a code block");
  std::set<std::string> wrong_lines;
  for (const auto& line : split_lines(item.wrong_kernel)) wrong_lines.insert(trim(line));
  for (const auto& raw : split_lines(item.fixed_kernel)) {
    const std::string line = trim(raw);
    if (line.size() >= kMinQuotedLineChars && !wrong_lines.count(line) && contains(text, line))
      return make_error("quotes_fixed_kernel", "copies the line `{}`", line);
  }
  return r;
}

Result<RationaleSummary> write_rationales(const std::vector<RationaleItem>& items,
                                          const RationaleOptions& options, ModelClient& teacher,
                                          const std::string& log_path) {
  PTXB_ASSIGN_OR_RETURN(auto log, OutcomeLog::open(log_path));
  RationaleSummary summary;
  for (const RationaleItem& item : items) {
    if (interrupted()) break;
    if (log->contains(item.id)) {
      ++summary.already_decided;
      continue;
    }
    std::string last_reason, last_detail;
    std::optional<Rationale> accepted;
    bool teacher_failed = false;
    int attempt = 0;
    for (attempt = 1; attempt <= options.attempts && !accepted; ++attempt) {
      auto reply = teacher.complete(rationale_request(item));
      if (!reply.ok()) {
        summary.unfinished.push_back(fmt::format("{}: teacher: {} [{}]", item.id,
                                                 reply.error().message, reply.error().code));
        teacher_failed = true;
        break;
      }
      auto checked = check_rationale(reply->content, item, options);
      if (checked.ok()) {
        accepted = checked.value();
      } else {
        last_reason = checked.error().code;
        last_detail = checked.error().message;
        ++summary.rejected_answers[last_reason];
      }
    }
    if (teacher_failed || interrupted()) continue;
    if (accepted) {
      PTXB_RETURN_IF_ERROR(log->append(Json{{"id", item.id},
                                            {"outcome", "kept"},
                                            {"attempts", attempt - 1},
                                            {"analysis", accepted->analysis},
                                            {"plan", accepted->plan}}));
      ++summary.kept;
    } else {
      PTXB_RETURN_IF_ERROR(log->append(Json{{"id", item.id},
                                            {"outcome", "dropped"},
                                            {"attempts", options.attempts},
                                            {"reason", last_reason},
                                            {"detail", last_detail}}));
      ++summary.dropped;
      ++summary.dropped_by_reason[last_reason];
    }
  }
  return summary;
}

}  // namespace ptxb::adapt
