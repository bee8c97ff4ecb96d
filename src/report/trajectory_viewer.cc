#include "report/trajectory_viewer.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/strings.h"
#include "report/line_diff.h"
#include "report/viewer_script.h"

namespace ptxb {
namespace {

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json diff_json(const std::string& before, const std::string& after) {
  LineDiff diff = diff_lines(before, after);
  Json hunks = Json::array();
  for (const DiffLine& line : diff_hunks(diff)) {
    const char* op = line.op == DiffOp::kAdded ? "+" : line.op == DiffOp::kRemoved ? "-" : "=";
    hunks.push_back(Json::array({op, line.text}));
  }
  return Json{
      {"added", diff.added}, {"removed", diff.removed}, {"coarse", diff.coarse}, {"hunks", hunks}};
}

Json turn_json(const TurnRecord& record, const TurnDetail* detail, const std::string& previous) {
  Json turn{{"turn", record.turn},
            {"status", record.status_name()},
            {"reason", record.reason},
            {"no_code_reason", record.no_code_reason},
            {"speedup", optional_number(record.speedup)},
            {"speedup_low", optional_number(record.speedup_low)},
            {"speedup_high", optional_number(record.speedup_high)},
            {"also_reference_speedup", optional_number(record.also_reference_speedup)},
            {"target_instructions", record.target_instructions},
            {"tokens",
             {{"prompt", record.tokens.prompt},
              {"completion", record.tokens.completion},
              {"reasoning", record.tokens.reasoning}}},
            {"wall_s", {{"model", record.model_wall_s}, {"eval", record.eval_wall_s}}}};
  if (!detail) {
    turn["note"] = "no turn file (turns/<trajectory>/turnN.json) in the run directory";
    return turn;
  }
  turn["source"] = detail->source;
  turn["source_note"] = detail->source_note;
  turn["compile"] =
      detail->compile_status.empty() ? "" : detail->compile_status + ": " + detail->compile_message;
  turn["eval_message"] = detail->eval_message;
  turn["inst_reason"] = detail->inst_reason;
  Json families = Json::array();
  for (const FamilyCount& family : detail->families)
    families.push_back(Json{{"family", family.family},
                            {"static", family.static_count},
                            {"executed", family.executed ? Json(*family.executed) : Json()}});
  turn["families"] = families;
  turn["feedback"] = detail->feedback;
  turn["started"] = detail->started;
  turn["finished"] = detail->finished;
  if (!detail->source.empty() && !previous.empty())
    turn["diff"] = diff_json(previous, detail->source);
  return turn;
}

// JSON inside <script> is raw text: only "</script" (and "<!--") could end or alter it, and '<'
// occurs in JSON only inside strings, where \u003c means the same character.
std::string script_safe(const Json& data) {
  return replace_all(data.dump(-1, ' ', false, Json::error_handler_t::replace), "<", "\\u003c");
}

}  // namespace

Json viewer_data(const std::vector<Trajectory>& trajectories, const KernelRefResolver& resolver) {
  std::vector<const Trajectory*> sorted;
  for (const Trajectory& trajectory : trajectories) sorted.push_back(&trajectory);
  std::sort(sorted.begin(), sorted.end(), [](const Trajectory* a, const Trajectory* b) {
    return std::tie(a->key.model, a->key.definition, a->key.arch, a->key.variant,
                    a->key.trajectory) < std::tie(b->key.model, b->key.definition, b->key.arch,
                                                  b->key.variant, b->key.trajectory);
  });
  Json list = Json::array();
  for (const Trajectory* trajectory : sorted) {
    std::map<int, TurnDetail> details = load_turn_details(*trajectory, resolver);
    Json turns = Json::array();
    std::string previous;
    for (const TurnRecord& record : trajectory->turns) {
      auto found = details.find(record.turn);
      const TurnDetail* detail = found == details.end() ? nullptr : &found->second;
      turns.push_back(turn_json(record, detail, previous));
      // A turn without a kernel keeps the last one as the base of the next diff.
      if (detail && !detail->source.empty()) previous = detail->source;
    }
    list.push_back(Json{{"model", trajectory->key.model},
                        {"task", trajectory->key.definition},
                        {"workload_name", trajectory->workload_name},
                        {"arch", trajectory->key.arch},
                        {"variant", trajectory->key.variant},
                        {"trajectory", trajectory->key.trajectory},
                        {"run_dir", trajectory->run_dir},
                        {"turns", turns}});
  }
  return Json{{"trajectories", list}};
}

std::string render_viewer(const Json& data) {
  std::string out =
      "<section id=\"viewer\"><h2>Trajectory viewer</h2>\n"
      "<p>Pick a trajectory, then a turn: the kernel with its changes since the previous turn, "
      "the verdicts, the speedup over the library with its 95 % interval, the target "
      "instructions, the feedback the model read next, tokens and times.</p>\n"
      "<div class=\"controls\">"
      "<label>model <select id=\"viewer-model\"></select></label>"
      "<label>task <select id=\"viewer-task\"></select></label>"
      "<label>variant <select id=\"viewer-variant\"></select></label>"
      "<label>trajectory <select id=\"viewer-trajectory\"></select></label></div>\n"
      "<div id=\"viewer-turns\" class=\"turn-tabs\"></div>\n"
      "<div id=\"viewer-turn\"><p class=\"empty\">No trajectory recorded.</p></div>\n";
  out +=
      "<script type=\"application/json\" id=\"viewer-data\">" + script_safe(data) + "</script>\n";
  out += std::string("<script>") + kViewerScript + "</script>\n</section>\n";
  return out;
}

}  // namespace ptxb
