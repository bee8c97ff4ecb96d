// The notes corpus of the retrieval baseline (docs/adaptation.md "Prompt-time baselines"): one
// note per kept Fixit repair with a kept rationale, keyed by task. `ptxbench fixit notes` writes
// it from a work directory; `ptxbench run --retrieval NOTES.jsonl` reads it (notes_retrieval.h).
//
// NOTES.jsonl, one object per line:
//   {"id", "task", "failing_kernel", "feedback", "analysis", "plan", "fixed_kernel"}
// `feedback` is the exact feedback the failing kernel got, `analysis` and `plan` the reasoning
// teacher's rationale (rationale.h: first person, never quoting the fixed kernel), and
// `fixed_kernel` the repair that passed and was verified on fresh inputs.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::adapt {

struct FixNote {
  std::string id;
  std::string task;
  std::string failing_kernel;
  std::string feedback;
  std::string analysis;
  std::string plan;
  std::string fixed_kernel;

  Json to_json() const;
  // Errors name `origin` ("notes.jsonl:3").
  static Result<FixNote> from_json(const Json& json, const std::string& origin);
};

struct NotesBuild {
  std::vector<FixNote> notes;  // in the work directory's order of repairs (by failure id)
  int without_rationale = 0;   // kept repairs left out: no kept rationale yet
};

// The notes of `work_dir`'s kept repairs that have a kept rationale.
Result<NotesBuild> build_notes(const std::string& work_dir);

std::string notes_jsonl(const std::vector<FixNote>& notes);
// Every note of the file; a line that is not a note is an error naming it. Ids must be unique.
Result<std::vector<FixNote>> read_notes(const std::string& path);

}  // namespace ptxb::adapt
