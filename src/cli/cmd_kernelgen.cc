// `ptxbench kernelgen collect|reason|export`: the KernelGen baseline's fine-tuning data, correct
// kernels that execute the task's target instructions, each with a teacher's rationale
// (docs/adaptation.md). The same building blocks as `fixit`: one work directory, resumable
// rationales, the same record formats, token filter, leakage control and manifest.
//   collect RUN_DIR... --out WORK    PASSED, dynamic_present turns with speedup ≥ S
//   reason --work WORK --teacher M   first-person rationales for each collected kernel
//   export --work WORK --out F       chat-jsonl (3 messages) or four-part + F.manifest.json
// Exit codes: 0 done; 1 error or undecided items (rerun to continue); 2 usage; 130/143
// interrupted.
#include <iostream>

#include "adapt/kernelgen_collect.h"
#include "cli/adapt_steps.h"
#include "cli/command.h"
#include "core/fs.h"
#include "core/strings.h"

namespace ptxb::cli {
namespace {

struct KernelGenFlags {
  std::vector<std::string> run_dirs;
  std::string work;
  std::string out;
  adapt::CollectOptions collect;
  std::string teacher;
  adapt::RationaleOptions rationale;
  adapt::ExportOptions exporting;
  std::vector<std::string> holdout_tasks;
  std::vector<std::string> test_runs;
  bool ptx_dedup = false;
  std::string tokenizer;
  bool json = false;
};

Result<int> run_kernelgen_collect(const KernelGenFlags& flags) {
  PTXB_ASSIGN_OR_RETURN(adapt::CollectResult collected,
                        adapt::collect_kernels(flags.run_dirs, flags.collect));
  PTXB_RETURN_IF_ERROR(make_directories(flags.out));
  std::string lines;
  for (const auto& k : collected.taken) lines += k.to_json().dump() + "\n";
  PTXB_RETURN_IF_ERROR(write_file_atomic(flags.out + "/" + adapt::kKernelsFile, lines));
  PTXB_RETURN_IF_ERROR(write_file_atomic(flags.out + "/" + adapt::kCollectManifestFile,
                                         dump_pretty(collected.manifest) + "\n"));
  const Json& counts = collected.manifest["counts"];
  if (flags.json) {
    print_json(counts);
    return 0;
  }
  std::cout << fmt::format("{} of {} turns taken into {}/{}\n", collected.taken.size(),
                           counts["scanned_turns"].get<int>(), flags.out, adapt::kKernelsFile);
  for (const auto& [task, n] : collected.manifest["taken_by_task"].items())
    std::cout << "  " << task << ": " << n.dump() << "\n";
  std::cout << "skipped: " << counts["skipped_by_reason"].dump() << "\n";
  return 0;
}

Result<int> run_kernelgen_reason(const KernelGenFlags& flags) {
  PTXB_ASSIGN_OR_RETURN(auto kernels, adapt::read_collected(flags.work));
  return run_rationale_step("kernelgen", adapt::kernelgen_rationale_items(kernels), flags.rationale,
                            flags.work, flags.teacher, flags.json);
}

Result<int> run_kernelgen_export(const KernelGenFlags& flags,
                                 const std::vector<std::string>& tasks_dirs) {
  int without_rationale = 0;
  PTXB_ASSIGN_OR_RETURN(auto examples, adapt::kernelgen_examples(flags.work, without_rationale));
  adapt::ExportOptions options = flags.exporting;
  options.holdout_tasks = {flags.holdout_tasks.begin(), flags.holdout_tasks.end()};
  return run_export_step(std::move(examples),
                         Json{{"collected_without_rationale", without_rationale}}, options,
                         ExportStep{flags.test_runs, flags.ptx_dedup, tasks_dirs, flags.work,
                                    flags.out, flags.json, flags.tokenizer});
}

// The options of `kernelgen export`, the same as `fixit export`'s.
void add_kernelgen_export_options(CLI::App& exp, KernelGenFlags& f) {
  exp.add_option("--work", f.work, "Work directory")->required()->check(CLI::ExistingDirectory);
  exp.add_option("--out", f.out,
                 "Records file (JSONL); the manifest goes next to it as OUT.manifest.json")
      ->required();
  exp.add_option("--format", f.exporting.format, "chat-jsonl (default) or four-part")
      ->check(CLI::IsMember({"chat-jsonl", "four-part"}));
  exp.add_option("--seed", f.exporting.seed, "Shuffle seed (default 0)");
  exp.add_option("--max-tokens", f.exporting.max_tokens,
                 "Drop rows longer than this (tokens: estimated, or counted with --tokenizer; "
                 "default 65536)")
      ->check(CLI::Range(1, 100000000));
  exp.add_option("--tokenizer", f.tokenizer,
                 "Count tokens exactly with this Hugging Face tokenizer.json (byte-level BPE: "
                 "GPT-2, Qwen2/Qwen3, Llama 3) instead of estimating ceil(bytes/3.5)")
      ->check(CLI::ExistingFile);
  exp.add_option("--holdout-task", f.holdout_tasks, "Leave this task out; repeatable");
  exp.add_option("--heldout-run", f.test_runs,
                 "A run directory whose kernels are test data: rows with the same canonical "
                 "kernel are dropped; repeatable")
      ->check(CLI::ExistingDirectory);
  exp.add_flag("--ptx-dedup", f.ptx_dedup,
               "Also drop rows whose kernel compiles to the normalized PTX of a --heldout-run "
               "kernel (compiles them; needs nvcc)");
  exp.add_flag("--json", f.json, "Print the counts as JSON");
}

}  // namespace

CommandSpec make_kernelgen_command() {
  return {
      "kernelgen",
      "KernelGen fine-tuning data: collect correct, target-executing kernels, write "
      "rationales, export SFT records (docs/adaptation.md)",
      [](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
        auto f = std::make_shared<KernelGenFlags>();
        CLI::App* collect = app.add_subcommand(
            "collect", "Select PASSED, dynamic_present turns above a speedup (per task, dedup)");
        collect->add_option("run_dirs", f->run_dirs, "Run directories of `ptxbench run`")
            ->required()
            ->check(CLI::ExistingDirectory);
        collect
            ->add_option("--out", f->out,
                         "Work directory for kernels.jsonl and "
                         "collect-manifest.json")
            ->required();
        collect
            ->add_option("--min-speedup", f->collect.min_speedup,
                         "Take turns with at least this speedup over the reference (default 1)")
            ->check(CLI::Range(0.0, 1e9));
        collect
            ->add_option("--per-task-cap", f->collect.per_task_cap,
                         "At most N kernels per task, fastest first (0: all)")
            ->check(CLI::Range(0, 1000000));
        collect->add_flag("--json", f->json, "Print the counts as JSON");

        CLI::App* reason =
            app.add_subcommand("reason", "Write first-person rationales for collected kernels");
        reason->add_option("--work", f->work, "Work directory (from `kernelgen collect --out`)")
            ->required()
            ->check(CLI::ExistingDirectory);
        reason
            ->add_option("--teacher", f->teacher,
                         "Teacher model: PROVIDER:MODEL[@URL] as for `run --model`, or a model "
                         "object file (MODEL.json)")
            ->required();
        reason->add_option("--attempts", f->rationale.attempts, "Answers asked per kernel (3)")
            ->check(CLI::Range(1, 20));
        reason->add_option("--min-chars", f->rationale.min_chars, "Shortest rationale kept (200)")
            ->check(CLI::Range(1, 1000000));
        reason->add_option("--max-chars", f->rationale.max_chars, "Longest rationale kept (8000)")
            ->check(CLI::Range(1, 1000000));
        reason->add_flag("--json", f->json, "Print the counts as JSON");

        CLI::App* exp = app.add_subcommand("export", "Write the SFT records and their manifest");
        add_kernelgen_export_options(*exp, *f);
        app.footer(
            "Examples:\n"
            "  ptxbench kernelgen collect runs/teacher --min-speedup 1.2 --per-task-cap 40 "
            "--out kg\n"
            "  ptxbench kernelgen reason --work kg --teacher anthropic:claude-opus-4-8\n"
            "  ptxbench kernelgen export --work kg --out kernelgen.jsonl --heldout-run "
            "runs/heldout\n"
            "`reason` is resumable: after a kill, the same command continues.\n"
            "Exit codes: 0 done; 1 error or undecided items (rerun); 2 usage; 130/143 "
            "interrupted.");
        return [f, collect, reason, exp, &globals]() -> Result<int> {
          if (collect->parsed()) return run_kernelgen_collect(*f);
          if (reason->parsed()) return run_kernelgen_reason(*f);
          if (exp->parsed()) return run_kernelgen_export(*f, globals.tasks_dirs);
          return make_error("usage",
                            "kernelgen: expected a subcommand (collect, reason or export)");
        };
      }};
}

}  // namespace ptxb::cli
