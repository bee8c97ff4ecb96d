#include "adapt/fix_notes.h"

#include <set>

#include "adapt/fixit_work.h"
#include "core/json_fields.h"

namespace ptxb::adapt {

Json FixNote::to_json() const {
  return Json{{"id", id},
              {"task", task},
              {"failing_kernel", failing_kernel},
              {"feedback", feedback},
              {"analysis", analysis},
              {"plan", plan},
              {"fixed_kernel", fixed_kernel}};
}

Result<FixNote> FixNote::from_json(const Json& json, const std::string& origin) {
  FixNote note;
  FieldReader r(json);
  r.required("id", note.id).required("task", note.task);
  r.required("failing_kernel", note.failing_kernel).required("feedback", note.feedback);
  r.required("analysis", note.analysis).required("plan", note.plan);
  r.required("fixed_kernel", note.fixed_kernel);
  if (!r.status().ok()) return r.status().error().with_context(origin);
  // A note without a task is never retrieved, and one without a failing kernel never matches:
  // either is a damaged file, not a note.
  if (note.id.empty() || note.task.empty() || note.failing_kernel.empty())
    return make_error("parse", "{}: id, task and failing_kernel must not be empty", origin);
  return note;
}

Result<NotesBuild> build_notes(const std::string& work_dir) {
  NotesBuild build;
  PTXB_ASSIGN_OR_RETURN(auto examples, fixit_examples(work_dir, build.without_rationale));
  for (SftExample& e : examples)
    build.notes.push_back(FixNote{std::move(e.id), std::move(e.task), std::move(e.wrong_kernel),
                                  std::move(e.feedback), std::move(e.analysis), std::move(e.plan),
                                  std::move(e.fixed_kernel)});
  return build;
}

std::string notes_jsonl(const std::vector<FixNote>& notes) {
  std::string out;
  for (const FixNote& note : notes) out += note.to_json().dump() + "\n";
  return out;
}

Result<std::vector<FixNote>> read_notes(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(auto lines, read_jsonl_file(path));
  std::vector<FixNote> notes;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    PTXB_ASSIGN_OR_RETURN(FixNote note,
                          FixNote::from_json(lines[i], fmt::format("{} note {}", path, i + 1)));
    if (!ids.insert(note.id).second)
      return make_error("parse", "{} note {}: id {} is used twice", path, i + 1, note.id);
    notes.push_back(std::move(note));
  }
  return notes;
}

}  // namespace ptxb::adapt
