#include "adapt/fixit_work.h"

#include "adapt/failure_mining.h"
#include "adapt/outcome_log.h"
#include "adapt/source_tokens.h"
#include "core/fs.h"
#include "core/strings.h"

namespace ptxb::adapt {
namespace {

constexpr std::size_t kMaxKernelFileBytes = 1u << 20;

Result<std::map<std::string, MinedFailure>> failures_by_id(const std::string& work_dir) {
  const std::string path = work_dir + "/" + kFailuresFile;
  if (!path_exists(path))
    return make_error("usage",
                      "{}: no mined failures here (run `ptxbench fixit mine RUN_DIR... "
                      "--out {}` first)",
                      path, work_dir);
  PTXB_ASSIGN_OR_RETURN(auto failures, read_failures(path));
  std::map<std::string, MinedFailure> by_id;
  for (auto& f : failures) by_id.emplace(f.id, std::move(f));
  return by_id;
}

}  // namespace

Result<std::vector<RationaleItem>> kept_repairs(const std::string& work_dir) {
  PTXB_ASSIGN_OR_RETURN(auto failures, failures_by_id(work_dir));
  if (!path_exists(work_dir + "/" + kRepairsLog))
    return make_error("usage",
                      "{}/{}: no repairs yet (run `ptxbench fixit repair --work {}` "
                      "first)",
                      work_dir, kRepairsLog, work_dir);
  PTXB_ASSIGN_OR_RETURN(auto log, OutcomeLog::open(work_dir + "/" + kRepairsLog));
  std::vector<RationaleItem> items;
  for (const auto& [id, entry] : log->entries()) {
    if (entry.value("outcome", "") != "kept") continue;
    auto failure = failures.find(id);
    if (failure == failures.end())
      return make_error("parse", "{}/{}: repair {} has no failure in {}", work_dir, kRepairsLog, id,
                        kFailuresFile);
    const std::string fixed_file = work_dir + "/" + entry.value("fixed_kernel_file", "");
    PTXB_ASSIGN_OR_RETURN(std::string fixed, read_file(fixed_file, kMaxKernelFileBytes));
    const MinedFailure& f = failure->second;
    items.push_back(RationaleItem{f.id, f.task_message, f.kernel, f.feedback, fixed});
  }
  return items;
}

Result<std::vector<SftExample>> fixit_examples(const std::string& work_dir, int& skipped) {
  PTXB_ASSIGN_OR_RETURN(auto failures, failures_by_id(work_dir));
  PTXB_ASSIGN_OR_RETURN(auto repairs, kept_repairs(work_dir));
  PTXB_ASSIGN_OR_RETURN(auto log, OutcomeLog::open(work_dir + "/" + kRationalesLog));
  const auto rationales = log->entries();
  std::vector<SftExample> examples;
  skipped = 0;
  for (const RationaleItem& item : repairs) {
    auto r = rationales.find(item.id);
    if (r == rationales.end() || r->second.value("outcome", "") != "kept") {
      ++skipped;
      continue;
    }
    const MinedFailure& f = failures.at(item.id);
    SftExample e;
    e.id = f.id;
    e.kind = "fixit";
    e.task = f.task;
    e.system = f.system_prompt;
    e.task_message = f.task_message;
    e.wrong_kernel = f.kernel;
    e.feedback = f.feedback;
    e.analysis = r->second.value("analysis", "");
    e.plan = r->second.value("plan", "");
    e.fixed_kernel = item.fixed_kernel;
    examples.push_back(std::move(e));
  }
  return examples;
}

Result<std::map<std::string, std::string>> test_kernel_hashes(
    const std::vector<std::string>& runs) {
  std::map<std::string, std::string> hashes;
  for (const std::string& run : runs) {
    if (!is_directory(run + "/turns"))
      return make_error("usage", "{}: not a run directory (no turns/ folder)", run);
    PTXB_ASSIGN_OR_RETURN(auto files, list_files_recursive(run + "/turns"));
    for (const std::string& file : files) {
      if (!ends_with(file, ".cu")) continue;
      PTXB_ASSIGN_OR_RETURN(std::string source, read_file(file, kMaxKernelFileBytes));
      hashes.try_emplace(canonical_source_hash(source), file);
    }
  }
  return hashes;
}

}  // namespace ptxb::adapt
