#include "cli/adapt_steps.h"

#include <iostream>

#include "cli/command.h"

#include "adapt/fixit_work.h"
#include "adapt/ptx_leakage.h"
#include "compile/toolchain.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/process.h"
#include "core/strings.h"
#include "llm/http_transport.h"
#include "llm/model_factory.h"
#include "tasks/registry.h"

namespace ptxb::cli {

// Exit status of a step that left items undecided (teacher or evaluator failures, Ctrl-C).
Result<int> finish_adapt_step(const std::string& step, const std::vector<std::string>& unfinished,
                              const std::string& rerun) {
  if (const int signal_number = interrupt_signal(); signal_number != 0) {
    std::cerr << fmt::format(
        "ptxbench: error: interrupted by {}; nothing half-done recorded; "
        "continue with: {}\n",
        signal_name(signal_number), rerun);
    return 128 + signal_number;
  }
  for (const auto& line : unfinished) std::cerr << "ptxbench: warning: " << line << "\n";
  if (!unfinished.empty())
    return make_error("incomplete",
                      "{}: {} undecided (teacher or evaluator failures above); "
                      "continue with: {}",
                      step, count_noun(static_cast<long long>(unfinished.size()), "item"), rerun);
  return 0;
}

Result<ModelConfig> teacher_config(const std::string& spec) {
  if (spec.empty()) return make_error("usage", "--teacher is required");
  if (ends_with(spec, ".json") && path_exists(spec)) {
    PTXB_ASSIGN_OR_RETURN(Json json, read_json_file(spec));
    return ModelConfig::from_json(json, spec);
  }
  return ModelConfig::from_shortcut(spec);
}

Result<int> run_rationale_step(const std::string& command,
                               const std::vector<adapt::RationaleItem>& items,
                               const adapt::RationaleOptions& options, const std::string& work,
                               const std::string& teacher_spec, bool json) {
  install_interrupt_handlers();
  PTXB_ASSIGN_OR_RETURN(ModelConfig teacher, teacher_config(teacher_spec));
  CurlHttpTransport transport;
  PTXB_ASSIGN_OR_RETURN(auto client, make_model_client(teacher, transport, [](const auto& line) {
                          std::cerr << line << "\n";
                        }));
  PTXB_ASSIGN_OR_RETURN(
      adapt::RationaleSummary summary,
      adapt::write_rationales(items, options, *client, work + "/" + adapt::kRationalesLog));
  if (json)
    print_json(summary.to_json());
  else
    std::cout << fmt::format(
        "rationales: {} kept, {} dropped {}, rejected answers {}, {} "
        "decided earlier\n",
        summary.kept, summary.dropped, Json(summary.dropped_by_reason).dump(),
        Json(summary.rejected_answers).dump(), summary.already_decided);
  return finish_adapt_step(
      command + " reason", summary.unfinished,
      fmt::format("ptxbench {} reason --work {} --teacher {}", command, work, teacher_spec));
}

namespace {

// --ptx-dedup: drops the rows whose kernels compile to the normalized PTX of a test kernel
// (adapt/ptx_leakage.h), before the export's own filters; the drops go into the manifest.
Result<Json> apply_ptx_dedup(std::vector<adapt::SftExample>& examples, const ExportStep& step) {
  if (step.test_runs.empty())
    return make_error("usage", "--ptx-dedup needs the test kernels: add --heldout-run RUN_DIR");
  PTXB_ASSIGN_OR_RETURN(TaskRegistry registry, TaskRegistry::load(step.tasks_dirs));
  SystemProcessRunner runner;
  PTXB_ASSIGN_OR_RETURN(Toolchain toolchain, Toolchain::discover(runner));
  PTXB_ASSIGN_OR_RETURN(adapt::PtxLeakageResult leakage,
                        adapt::drop_ptx_collisions(std::move(examples), step.test_runs,
                                                   adapt::compile_stage_ptx(registry, toolchain)));
  examples = std::move(leakage.kept);
  return Json{{"counts", leakage.counts}, {"drops", leakage.drops}};
}

}  // namespace

Result<int> run_export_step(std::vector<adapt::SftExample> examples, const Json& unused_counts,
                            adapt::ExportOptions options, const ExportStep& step) {
  // Loaded first: a tokenizer.json this cannot count exactly fails before any compile.
  std::optional<adapt::BpeTokenizer> tokenizer;
  if (!step.tokenizer.empty()) {
    PTXB_ASSIGN_OR_RETURN(tokenizer, adapt::BpeTokenizer::load(step.tokenizer));
    options.tokenizer = &*tokenizer;
  }
  Json ptx = nullptr;
  if (step.ptx_dedup) {
    PTXB_ASSIGN_OR_RETURN(ptx, apply_ptx_dedup(examples, step));
  }
  PTXB_ASSIGN_OR_RETURN(options.test_kernels, adapt::test_kernel_hashes(step.test_runs));
  PTXB_ASSIGN_OR_RETURN(adapt::ExportResult exported,
                        adapt::export_records(std::move(examples), options));
  Json& counts = exported.manifest["counts"];
  for (const auto& [key, count] : unused_counts.items()) counts[key] = count;
  if (!ptx.is_null()) {
    const int ptx_drops = static_cast<int>(ptx["drops"].size());
    for (const Json& drop : ptx["drops"]) exported.manifest["drops"].push_back(drop);
    counts["input"] = counts["input"].get<int>() + ptx_drops;
    counts["dropped"] = counts["dropped"].get<int>() + ptx_drops;
    if (ptx_drops > 0) counts["dropped_by_reason"]["same_ptx_as_test_kernel"] = ptx_drops;
    exported.manifest["ptx_dedup"] = ptx["counts"];
  }
  exported.manifest["work_dir"] = step.work;
  exported.manifest["test_runs"] = step.test_runs;
  PTXB_RETURN_IF_ERROR(write_file_atomic(step.out, exported.jsonl));
  PTXB_RETURN_IF_ERROR(
      write_file_atomic(step.out + ".manifest.json", dump_pretty(exported.manifest) + "\n"));
  if (step.json)
    print_json(counts);
  else
    std::cout << fmt::format("{} rows written to {} (manifest {}.manifest.json); dropped {}\n",
                             counts["written"].get<int>(), step.out, step.out,
                             counts["dropped_by_reason"].dump());
  return 0;
}

}  // namespace ptxb::cli
