// The steps `fixit` and `kernelgen` share (adapt_steps.cc): the teacher model of --teacher,
// the exit status of a resumable step, the rationale step and the export step.
#pragma once

#include <string>
#include <vector>

#include "adapt/rationale.h"
#include "adapt/sft_record.h"
#include "core/result.h"
#include "llm/model_config.h"

namespace ptxb::cli {

// PROVIDER:MODEL[@URL] as for `run --model`, or a model object file (MODEL.json).
Result<ModelConfig> teacher_config(const std::string& spec);

// Exit status of a step that may have left items undecided (teacher or evaluator failures,
// Ctrl-C): 0, 128+signal, or an "incomplete" error naming the command that continues it.
Result<int> finish_adapt_step(const std::string& step, const std::vector<std::string>& unfinished,
                              const std::string& rerun);

// `fixit reason` and `kernelgen reason`: rationales for `items` from the teacher, committed to
// WORK/rationales.jsonl, the counts printed (as JSON with `json`).
Result<int> run_rationale_step(const std::string& command,
                               const std::vector<adapt::RationaleItem>& items,
                               const adapt::RationaleOptions& options, const std::string& work,
                               const std::string& teacher_spec, bool json);

// Where and how `fixit export` / `kernelgen export` write.
struct ExportStep {
  std::vector<std::string> test_runs;  // --heldout-run
  bool ptx_dedup = false;              // --ptx-dedup (adapt/ptx_leakage.h)
  std::vector<std::string> tasks_dirs;
  std::string work, out;
  bool json = false;
  std::string tokenizer;  // --tokenizer: a tokenizer.json that counts tokens exactly
};

// The records and OUT.manifest.json (with the step's `unused_counts`: items left out before
// the export); kernels of the test runs are kept out (ExportOptions::test_kernels, and by
// normalized PTX with ptx_dedup); rows are measured by step.tokenizer when one is given.
Result<int> run_export_step(std::vector<adapt::SftExample> examples, const Json& unused_counts,
                            adapt::ExportOptions options, const ExportStep& step);

}  // namespace ptxb::cli
