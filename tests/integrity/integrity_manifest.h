// The adversarial suite's manifest (testdata/integrity/expected.json) and the comparison of an
// evaluation result with an entry's expectation. Header-only test support, shared by the
// manifest's unit test and the GPU run (tests/integrity/*_test.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::integrity {

struct Outcome {
  std::string status;  // PTXBench status name, or a compile status (OK, FORBIDDEN)
  std::string reason;
  std::string message_contains;    // optional substring of the message
  std::vector<std::string> flags;  // optional: workload flags that must be present
  // optional: workloads[0].integrity.batch_bound.time_used must be this ("bound": the batch
  // bound replaced the CUPTI median; "cupti": it did not)
  std::string time_used;

  std::string describe() const {
    std::string text = reason.empty() ? status : status + " " + reason;
    return time_used.empty() ? text : text + " (time_used " + time_used + ")";
  }
};

struct RerunExpectation {
  std::vector<Outcome> accept;  // any of these
  std::string stopped_by;       // "sandbox" or "runtime check"
  std::string mechanism;        // named in docs/integrity.md
};

struct Entry {
  std::string id;
  std::string kind;  // exploit | legit
  std::string file;  // absolute after load_manifest
  std::string task;
  std::vector<std::string> eval_flags;
  Outcome compile;                // what `ptxbench compile` must say
  Outcome expected;               // what `ptxbench eval` must say with every check on
  bool requires_sandbox = false;  // only the sandbox stops it: skipped where there is none
  bool sandbox_class = false;
  // An exploit the harness neutralises instead of rejecting (its verdict is then PASSED): the
  // mechanism that takes its advantage away, e.g. the L2 reset before every call.
  std::string neutralised_by;
  std::optional<RerunExpectation> without_static_checks;
};

struct Manifest {
  std::string path;
  std::string root;       // folder of the manifest
  std::string tasks_dir;  // absolute
  std::vector<Entry> entries;
};

inline Outcome outcome_from_json(const Json& j) {
  Outcome o;
  o.status = j.value("status", "");
  o.reason = j.value("reason", "");
  o.message_contains = j.value("message_contains", "");
  o.flags = j.value("flags", std::vector<std::string>{});
  o.time_used = j.value("time_used", "");
  return o;
}

inline Result<Manifest> load_manifest(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, 4u << 20));
  PTXB_ASSIGN_OR_RETURN(Json json, parse_json(text, path));
  Manifest m;
  m.path = path;
  m.root = path.substr(0, path.rfind('/'));
  if (json.value("format", "") != "ptxbench-integrity-suite/1")
    return make_error("manifest", "{}: unknown format", path);
  m.tasks_dir = m.root + "/" + json.value("tasks_dir", "tasks");
  for (const auto& e : json.value("entries", Json::array())) {
    Entry entry;
    entry.id = e.value("id", "");
    entry.kind = e.value("kind", "");
    entry.file = m.root + "/" + e.value("file", "");
    entry.task = e.value("task", "");
    entry.eval_flags = e.value("eval_flags", std::vector<std::string>{});
    entry.compile = outcome_from_json(e.value("compile", Json::object()));
    entry.expected = outcome_from_json(e.value("expected", Json::object()));
    entry.requires_sandbox = e.value("requires_sandbox", false);
    entry.sandbox_class = e.value("sandbox_class", false);
    entry.neutralised_by = e.value("neutralised_by", std::string());
    if (e.contains("without_static_checks")) {
      RerunExpectation rerun;
      const Json& w = e["without_static_checks"];
      for (const auto& a : w.value("accept", Json::array()))
        rerun.accept.push_back(outcome_from_json(a));
      rerun.stopped_by = w.value("stopped_by", "");
      rerun.mechanism = w.value("mechanism", "");
      entry.without_static_checks = rerun;
    }
    m.entries.push_back(std::move(entry));
  }
  return m;
}

// What a `ptxbench eval --json` (or `compile --json`) result says, in the manifest's terms.
struct Observed {
  std::string status;
  std::string reason;
  std::string message;
  std::vector<std::string> flags;
  std::string time_used;  // workloads[0].integrity.batch_bound.time_used, "" when absent

  std::string describe() const {
    std::string text = reason.empty() ? status : status + " " + reason;
    return time_used.empty() ? text : text + " (time_used " + time_used + ")";
  }
};

// The message plus the evidence of every forbidden finding of a compile result: the message
// names only the first finding, and the order of undefined symbols is the linker's.
inline std::string compile_evidence(const Json& compile) {
  std::string text;
  if (!compile.is_object()) return text;
  for (const auto& finding : compile.value("forbidden", Json::array()))
    text += "\n" + finding.value("evidence", "");
  return text;
}

inline Observed observe_compile(const Json& compile) {
  Observed o;
  o.status = compile.value("status", "");
  o.reason = compile.value("reason", "");
  o.message = compile.value("message", "") + compile_evidence(compile);
  return o;
}

inline Observed observe_eval(const Json& result) {
  Observed o;
  o.status = result.value("status", "");
  o.reason = result.value("reason", "");
  o.message = result.value("message", "") + compile_evidence(result.value("compile", Json()));
  const Json workloads = result.value("workloads", Json::array());
  if (!workloads.empty()) {
    o.flags = workloads[0].value("flags", std::vector<std::string>{});
    const Json& w = workloads[0];
    auto integrity = w.find("integrity");
    if (integrity != w.end() && integrity->is_object()) {
      auto bound = integrity->find("batch_bound");
      if (bound != integrity->end() && bound->is_object())
        o.time_used = bound->value("time_used", "");
    }
  }
  return o;
}

// "" when `observed` satisfies `expected`, else why not.
inline std::string mismatch(const Outcome& expected, const Observed& observed) {
  if (observed.status != expected.status || observed.reason != expected.reason)
    return "got " + observed.describe() + ", expected " + expected.describe();
  if (!expected.message_contains.empty() &&
      observed.message.find(expected.message_contains) == std::string::npos)
    return "message lacks '" + expected.message_contains + "': " + observed.message.substr(0, 200);
  for (const auto& flag : expected.flags) {
    bool present = false;
    for (const auto& f : observed.flags) present = present || f == flag;
    if (!present) return "flag '" + flag + "' missing";
  }
  if (!expected.time_used.empty() && observed.time_used != expected.time_used)
    return "batch_bound.time_used is '" + observed.time_used + "', expected '" +
           expected.time_used + "'";
  return "";
}

inline std::string mismatch_any(const std::vector<Outcome>& accept, const Observed& observed) {
  std::string why;
  for (const auto& a : accept) {
    why = mismatch(a, observed);
    if (why.empty()) return "";
  }
  std::string expected;
  for (const auto& a : accept) expected += (expected.empty() ? "" : " | ") + a.describe();
  return "got " + observed.describe() + ", expected one of " + expected;
}

}  // namespace ptxb::integrity
