// `ptxbench fixit mine|repair|reason|export|notes`: Fixit fine-tuning data from a model's own
// failures (docs/adaptation.md). Each step reads and writes one work directory and is resumable:
// run the same command again after a kill and it continues where it stopped, never redoing a
// decided item.
//   mine RUN_DIR... --out WORK    failed turns (compile, runtime, memory, numerical, timeout)
//   repair --work WORK --teacher M  the teacher's repairs, kept only when PASSED with
//                                   dynamic_present and again on fresh inputs
//   reason --work WORK --teacher M  first-person rationales from failure to fix
//   export --work WORK --out F    chat-jsonl or four-part records + F.manifest.json
//   notes --work WORK --out F     the retrieval notes of `run --retrieval F` (fix_notes.h)
// Exit codes: 0 done; 1 error or unfinished items (rerun to continue); 2 usage; 130/143
// interrupted (rerun to continue).
#include <iostream>

#include "adapt/failure_mining.h"
#include "adapt/fix_notes.h"
#include "adapt/fixit_work.h"
#include "adapt/repair_loop.h"
#include "agent/turn_evaluator.h"
#include "cli/adapt_steps.h"
#include "cli/command.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/strings.h"
#include "llm/http_transport.h"
#include "llm/model_factory.h"

namespace ptxb::cli {
namespace {

using namespace ptxb::adapt;

struct FixitFlags {
  std::vector<std::string> run_dirs;
  std::string work;
  std::string out;
  int per_task_cap = 0;
  int max_source_turn = 0;
  std::vector<std::string> error_types;
  std::string teacher;
  int turns = 5;
  double target_speedup = 0;
  int concurrency = 4;
  std::uint64_t seed = 1;
  int attempts = 3;
  int min_chars = 200;
  int max_chars = 8000;
  std::string format = "chat-jsonl";
  std::uint64_t shuffle_seed = 0;
  std::size_t max_tokens = kMaxSftTokens;
  std::vector<std::string> holdout_tasks;
  std::vector<std::string> test_runs;
  bool ptx_dedup = false;
  std::string tokenizer;
  bool json = false;
};

Result<int> run_mine(const FixitFlags& flags) {
  MiningOptions options;
  options.per_task_cap = flags.per_task_cap;
  options.max_source_turn = flags.max_source_turn;
  if (!flags.error_types.empty())
    options.error_types = {flags.error_types.begin(), flags.error_types.end()};
  PTXB_ASSIGN_OR_RETURN(MiningResult mined, mine_failures(flags.run_dirs, options));
  PTXB_RETURN_IF_ERROR(make_directories(flags.out));
  std::string lines;
  for (const auto& f : mined.taken) lines += f.to_json().dump() + "\n";
  PTXB_RETURN_IF_ERROR(write_file_atomic(flags.out + "/" + kFailuresFile, lines));
  PTXB_RETURN_IF_ERROR(
      write_file_atomic(flags.out + "/" + kMineManifestFile, dump_pretty(mined.manifest) + "\n"));
  if (flags.json) {
    print_json(mined.manifest["counts"]);
  } else {
    std::cout << fmt::format("{} of {} turns taken into {}/{}\n", mined.taken.size(),
                             mined.manifest["counts"]["scanned_turns"].get<int>(), flags.out,
                             kFailuresFile);
    for (const auto& [task, types] : mined.manifest["taken_by_task_and_type"].items())
      std::cout << "  " << task << ": " << types.dump() << "\n";
    std::cout << "skipped: " << mined.manifest["counts"]["skipped_by_reason"].dump() << "\n";
  }
  return 0;
}

Result<int> run_repair(const FixitFlags& flags, const GlobalOptions& globals,
                       const std::function<void(EvaluatorFactory&)>& adjust) {
  install_interrupt_handlers();
  PTXB_ASSIGN_OR_RETURN(auto failures, read_failures(flags.work + "/" + kFailuresFile));
  PTXB_ASSIGN_OR_RETURN(ModelConfig teacher, teacher_config(flags.teacher));
  PTXB_ASSIGN_OR_RETURN(TaskRegistry registry, TaskRegistry::load(globals.tasks_dirs));
  CurlHttpTransport transport;
  ConsoleProgress progress(std::cerr, false, flags.turns);
  PTXB_ASSIGN_OR_RETURN(auto client, make_model_client(teacher, transport, [&](const auto& line) {
                          progress.note(line);
                        }));
  EvalTools tools = EvalTools::discover();
  EvaluatorFactory make_evaluator = [&](const std::string& devices) {
    return std::make_unique<PipelineTurnEvaluator>(registry, globals.tasks_dirs, tools, devices);
  };
  adjust(make_evaluator);
  auto evaluator = make_evaluator("");
  // A repair is kept only on a run-time verdict: without GPU stages nothing could be kept, and
  // every teacher call would be paid for nothing.
  if (const std::string why = evaluator->gpu_unavailable_reason(); !why.empty())
    return make_error("usage",
                      "fixit repair needs the GPU stages ({}); run it where there is a "
                      "GPU",
                      why);
  EvaluatorPool pool({evaluator.get()});
  RepairOptions options;
  options.teacher = teacher;
  options.turns = flags.turns;
  options.target_speedup = flags.target_speedup;
  options.eval.seed = flags.seed;
  options.model_concurrency = flags.concurrency;
  RepairServices services{*client, pool, progress};
  PTXB_ASSIGN_OR_RETURN(RepairSummary summary,
                        run_repairs(failures, options, flags.work, services));
  if (flags.json)
    print_json(summary.to_json());
  else
    std::cout << fmt::format("repairs: {} kept, {} dropped {}, {} decided earlier\n", summary.kept,
                             summary.dropped, Json(summary.dropped_by_reason).dump(),
                             summary.already_decided);
  return finish_adapt_step(
      "fixit repair", summary.unfinished,
      fmt::format("ptxbench fixit repair --work {} --teacher {}", flags.work, flags.teacher));
}

Result<int> run_reason(const FixitFlags& flags) {
  PTXB_ASSIGN_OR_RETURN(auto items, kept_repairs(flags.work));
  RationaleOptions options;
  options.attempts = flags.attempts;
  options.min_chars = flags.min_chars;
  options.max_chars = flags.max_chars;
  return run_rationale_step("fixit", items, options, flags.work, flags.teacher, flags.json);
}

Result<int> run_export(const FixitFlags& flags, const std::vector<std::string>& tasks_dirs) {
  int without_rationale = 0;
  PTXB_ASSIGN_OR_RETURN(auto examples, fixit_examples(flags.work, without_rationale));
  ExportOptions options;
  options.format = flags.format;
  options.seed = flags.shuffle_seed;
  options.max_tokens = flags.max_tokens;
  options.holdout_tasks = {flags.holdout_tasks.begin(), flags.holdout_tasks.end()};
  return run_export_step(std::move(examples),
                         Json{{"kept_repairs_without_rationale", without_rationale}}, options,
                         ExportStep{flags.test_runs, flags.ptx_dedup, tasks_dirs, flags.work,
                                    flags.out, flags.json, flags.tokenizer});
}

Result<int> run_notes(const FixitFlags& flags) {
  PTXB_ASSIGN_OR_RETURN(NotesBuild build, build_notes(flags.work));
  PTXB_RETURN_IF_ERROR(write_file_atomic(flags.out, notes_jsonl(build.notes)));
  std::map<std::string, int> by_task;
  for (const FixNote& note : build.notes) ++by_task[note.task];
  if (flags.json) {
    print_json(Json{{"written", build.notes.size()},
                    {"by_task", by_task},
                    {"kept_repairs_without_rationale", build.without_rationale}});
  } else {
    std::cout << fmt::format("{} written to {}",
                             count_noun(static_cast<long long>(build.notes.size()), "note"),
                             flags.out);
    if (build.without_rationale > 0)
      std::cout << fmt::format(
          " ({} left out: no kept rationale; run `ptxbench fixit reason --work {}`)",
          count_noun(build.without_rationale, "kept repair"), flags.work);
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

CommandSpec make_fixit_command(const Extension<EvaluatorFactory>& extension) {
  return {
      "fixit",
      "Fixit fine-tuning data: mine failed turns, repair them with a teacher, write rationales, "
      "export SFT records, build retrieval notes (docs/adaptation.md)",
      [extension](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
        auto f = std::make_shared<FixitFlags>();
        CLI::App* mine = app.add_subcommand(
            "mine", "Select failed turns of run directories (stratified, deduplicated)");
        mine->add_option("run_dirs", f->run_dirs, "Run directories of `ptxbench run`")
            ->required()
            ->check(CLI::ExistingDirectory);
        mine->add_option("--out", f->out,
                         "Work directory to write failures.jsonl and "
                         "mine-manifest.json into")
            ->required();
        mine->add_option("--per-task-cap", f->per_task_cap,
                         "At most N failures per task, round-robin over error types (0: all)")
            ->check(CLI::Range(0, 1000000));
        mine->add_option("--max-source-turn", f->max_source_turn,
                         "Only turns 1..T of each trajectory (0: all)")
            ->check(CLI::Range(0, 1000));
        mine->add_option("--statuses", f->error_types,
                         "Error types to take, comma-separated (default: compile,runtime,memory,"
                         "numerical,timeout; never integrity or infrastructure failures)")
            ->delimiter(',');
        mine->add_flag("--json", f->json, "Print the counts as JSON");

        CLI::App* repair = app.add_subcommand(
            "repair", "Repair each mined failure with a teacher model (resumable; needs a GPU)");
        CLI::App* reason =
            app.add_subcommand("reason", "Write first-person rationales for kept repairs");
        for (CLI::App* step : {repair, reason}) {
          step->add_option("--work", f->work, "Work directory (from `fixit mine --out`)")
              ->required()
              ->check(CLI::ExistingDirectory);
          step->add_option("--teacher", f->teacher,
                           "Teacher model: PROVIDER:MODEL[@URL] as for `run --model`, or a "
                           "model object file (MODEL.json, the fields of docs/agent.md)")
              ->required();
          step->add_flag("--json", f->json, "Print the counts as JSON");
        }
        repair->add_option("--turns", f->turns, "Repair turns per failure (default 5)")
            ->check(CLI::Range(1, 100));
        repair
            ->add_option("--target-speedup", f->target_speedup,
                         "A repair must also reach this speedup (default 0: any)")
            ->check(number_at_least(0, true));
        repair
            ->add_option("--concurrency", f->concurrency,
                         "Repairs in flight (teacher calls; evaluations share one GPU slot)")
            ->check(CLI::Range(1, 1024));
        repair->add_option("--seed", f->seed, "Base input seed of the evaluations (default 1)");
        auto adjust = install(extension, *repair);
        reason->add_option("--attempts", f->attempts, "Answers asked per repair (default 3)")
            ->check(CLI::Range(1, 20));
        reason->add_option("--min-chars", f->min_chars, "Shortest rationale kept (default 200)")
            ->check(CLI::Range(1, 1000000));
        reason->add_option("--max-chars", f->max_chars, "Longest rationale kept (default 8000)")
            ->check(CLI::Range(1, 1000000));

        CLI::App* exp = app.add_subcommand("export", "Write the SFT records and their manifest");
        exp->add_option("--work", f->work, "Work directory")
            ->required()
            ->check(CLI::ExistingDirectory);
        exp->add_option("--out", f->out,
                        "Records file (JSONL); the manifest goes next to it "
                        "as OUT.manifest.json")
            ->required();
        exp->add_option("--format", f->format, "chat-jsonl (default) or four-part")
            ->check(CLI::IsMember({"chat-jsonl", "four-part"}));
        exp->add_option("--seed", f->shuffle_seed, "Shuffle seed (default 0)");
        exp->add_option("--max-tokens", f->max_tokens,
                        "Drop rows longer than this (tokens: estimated, or counted with "
                        "--tokenizer; default 65536)")
            ->check(CLI::Range(1, 100000000));
        exp->add_option("--tokenizer", f->tokenizer,
                        "Count tokens exactly with this Hugging Face tokenizer.json (byte-level "
                        "BPE: GPT-2, Qwen2/Qwen3, Llama 3) instead of estimating ceil(bytes/3.5)")
            ->check(CLI::ExistingFile);
        exp->add_option("--holdout-task", f->holdout_tasks, "Leave this task out; repeatable");
        exp->add_option("--heldout-run", f->test_runs,
                        "A run directory whose kernels are test data: rows with the same "
                        "canonical kernel are dropped; repeatable")
            ->check(CLI::ExistingDirectory);
        exp->add_flag("--ptx-dedup", f->ptx_dedup,
                      "Also drop rows whose kernels compile to the normalized PTX of a "
                      "--heldout-run kernel (compiles them; needs nvcc)");
        exp->add_flag("--json", f->json, "Print the counts as JSON");

        CLI::App* notes = app.add_subcommand(
            "notes",
            "Write the retrieval notes of kept repairs with rationales (for `run "
            "--retrieval`)");
        notes->add_option("--work", f->work, "Work directory")
            ->required()
            ->check(CLI::ExistingDirectory);
        notes->add_option("--out", f->out, "Notes file (JSONL, one note per kept repair)")
            ->required();
        notes->add_flag("--json", f->json, "Print the counts as JSON");
        app.footer(
            "Examples:\n"
            "  ptxbench fixit mine runs/qwen --per-task-cap 60 --max-source-turn 4 --out fixit\n"
            "  ptxbench fixit repair --work fixit --teacher anthropic:claude-opus-4-8 --turns 5\n"
            "  ptxbench fixit reason --work fixit --teacher anthropic:claude-opus-4-8\n"
            "  ptxbench fixit export --work fixit --out fixit.jsonl --heldout-run runs/heldout\n"
            "  ptxbench fixit notes --work fixit --out notes.jsonl   # then: ptxbench run "
            "--retrieval notes.jsonl ...\n"
            "Every step is resumable: after a kill, the same command continues.\n"
            "Exit codes: 0 done; 1 error or undecided items (rerun); 2 usage; 130/143 "
            "interrupted.");
        return [f, mine, repair, reason, exp, notes, adjust, &globals]() -> Result<int> {
          if (mine->parsed()) return run_mine(*f);
          if (repair->parsed()) return run_repair(*f, globals, adjust);
          if (reason->parsed()) return run_reason(*f);
          if (exp->parsed()) return run_export(*f, globals.tasks_dirs);
          if (notes->parsed()) return run_notes(*f);
          return make_error("usage",
                            "fixit: expected a subcommand (mine, repair, reason, export or "
                            "notes)");
        };
      }};
}

}  // namespace ptxb::cli
