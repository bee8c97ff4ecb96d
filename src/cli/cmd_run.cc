// `ptxbench run [--config EXP.json] [--model M]... [--suite S | --task T...] [--variants A,B]
//               [--trajectories N] [--turns T] [--out DIR] [--evaluator URL[,URL...]]
//               [--guidance FILE|DIR] [--retrieval NOTES.jsonl [--retrieval-mode M]
//               [--retrieval-top-k K]] [--profiler-hints]`
// Runs MiniPTXAgent over models × tasks × prompt variants × trajectories into a run directory
// (docs/agent.md), resuming it when DIR already holds the same experiment. Progress goes to
// stderr, the summary table to stdout. With --evaluator every turn is judged by evaluation
// services (`ptxbench serve`, docs/service.md) instead of here. The prompt options
// (agent/prompt_options.h) are off unless given, as in the paper protocol.
// Exit codes: 0 every trajectory finished; 1 some stopped on model/evaluation failures (resume
// with `ptxbench run --out DIR`) or an error; 3 finished, but GPU stages were skipped (no GPU
// here: those turns are INFRA_ERROR, like `ptxbench eval`'s exit 3); 2 usage error; 130/143
// interrupted by SIGINT/SIGTERM (resumable).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "agent/experiment.h"
#include "agent/experiment_runner.h"
#include "agent/progress.h"
#include "agent/run_directory.h"
#include "agent/shard.h"
#include "agent/turn_evaluator.h"
#include "cli/command.h"
#include "cli/run_executor.h"
#include "core/clock.h"
#include "core/interrupt.h"
#include "core/strings.h"
#include "llm/http_transport.h"
#include "llm/model_factory.h"
#include "service/client_compile.h"
#include "service/remote_evaluator.h"

namespace ptxb::cli {
namespace {

struct RunFlags {
  std::string config_path;
  std::vector<std::string> models;
  std::string suite;
  std::vector<std::string> tasks;
  std::vector<std::string> variants;
  int trajectories = 0;  // 0: not given
  int turns = 0;
  std::string out;
  bool compile_only = false;
  std::vector<std::string> evaluators;  // service URLs
  bool remote_compile = false;
  // Prompt options: each set only when given (the config's, or the saved plan's, otherwise).
  std::string guidance;
  std::string retrieval;
  std::string retrieval_mode;
  int retrieval_top_k = 0;
  bool profiler_hints = false;
  ScaleOutFlags scale;  // --executor, --gpus, --shard, ... (run_executor.h)
};

// A path kept in plan.json: absolute, so that `ptxbench run --out DIR` resumes from anywhere.
std::string absolute_path(const std::string& path) {
  std::error_code ec;
  return std::filesystem::absolute(path, ec).lexically_normal().string();
}

Status apply_prompt_flags(const RunFlags& flags, PromptOptions& prompt) {
  if (!flags.guidance.empty()) prompt.guidance = absolute_path(flags.guidance);
  if (!flags.retrieval.empty()) prompt.retrieval = absolute_path(flags.retrieval);
  if (!flags.retrieval_mode.empty()) {
    PTXB_ASSIGN_OR_RETURN(prompt.retrieval_mode, adapt::parse_retrieval_mode(flags.retrieval_mode));
  }
  if (flags.retrieval_top_k) prompt.retrieval_top_k = flags.retrieval_top_k;
  if (flags.profiler_hints) prompt.profiler_hints = true;
  if ((!flags.retrieval_mode.empty() || flags.retrieval_top_k) && prompt.retrieval.empty())
    return make_error("usage",
                      "--retrieval-mode and --retrieval-top-k need --retrieval NOTES.jsonl");
  return ok_status();
}

// The experiment: --config (or the run directory's saved one when only --out is given), then
// the flags on top.
Result<ExperimentConfig> assemble_config(const RunFlags& flags) {
  ExperimentConfig config;
  const bool only_out = flags.config_path.empty() && flags.models.empty() && flags.suite.empty() &&
                        flags.tasks.empty() && !flags.out.empty();
  if (!flags.config_path.empty()) {
    PTXB_ASSIGN_OR_RETURN(Json json, read_json_file(flags.config_path));
    PTXB_ASSIGN_OR_RETURN(config, ExperimentConfig::from_json(json, flags.config_path));
  } else if (only_out) {
    auto saved = RunDirectory::saved_config(flags.out);
    if (!saved.ok())
      return make_error("usage",
                        "nothing to run: give --model and --suite/--task, or --config ({})",
                        saved.error().message);
    PTXB_ASSIGN_OR_RETURN(config, ExperimentConfig::from_json(*saved, flags.out + "/plan.json"));
  }
  if (!flags.models.empty()) {
    std::vector<ModelConfig> chosen;
    for (const auto& spec : flags.models) {
      auto named = std::find_if(config.models.begin(), config.models.end(),
                                [&](const ModelConfig& m) { return m.name == spec; });
      if (named != config.models.end()) {
        chosen.push_back(*named);
        continue;
      }
      PTXB_ASSIGN_OR_RETURN(ModelConfig model, ModelConfig::from_shortcut(spec));
      chosen.push_back(std::move(model));
    }
    config.models = std::move(chosen);
  }
  if (!flags.suite.empty() && !flags.tasks.empty())
    return make_error("usage", "give --suite or --task, not both");
  if (!flags.suite.empty()) {
    config.suite = flags.suite;
    config.tasks.clear();
  }
  if (!flags.tasks.empty()) {
    config.tasks = flags.tasks;
    config.suite.clear();
  }
  if (!flags.variants.empty()) config.variants = flags.variants;
  if (flags.trajectories) config.trajectories = flags.trajectories;
  if (flags.turns) config.turns = flags.turns;
  PTXB_RETURN_IF_ERROR(apply_prompt_flags(flags, config.prompt));
  return config;
}

// GPU slot i runs on the i-th GPU (one evaluation at a time per GPU): of --gpus when given
// (a local executor's worker gets its one GPU that way), else of CUDA_VISIBLE_DEVICES.
std::vector<std::string> slot_devices(int slots, const std::vector<std::string>& gpus) {
  if (!gpus.empty()) return gpus;
  if (slots <= 1) return {""};
  std::vector<std::string> visible;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES"); env && *env) visible = split(env, ',');
  std::vector<std::string> devices;
  for (int i = 0; i < slots; ++i)
    devices.push_back(i < static_cast<int>(visible.size())
                          ? trim(visible[static_cast<std::size_t>(i)])
                          : std::to_string(i));
  return devices;
}

// What a shard worker of `run --executor` runs, but its shard: this executable, the global
// options, the run directory (its plan holds the experiment) and how turns are judged.
std::vector<std::string> worker_argv(const RunFlags& flags, const GlobalOptions& globals,
                                     const std::string& out, const RunHooks& hooks) {
  std::vector<std::string> argv{std::filesystem::read_symlink("/proc/self/exe").string()};
  for (const auto& dir : globals.tasks_dirs) argv.insert(argv.end(), {"--tasks-dir", dir});
  argv.insert(argv.end(), {"run", "--out", out});
  if (!flags.evaluators.empty())
    argv.insert(argv.end(), {"--evaluator", join(flags.evaluators, ",")});
  if (flags.remote_compile) argv.push_back("--remote-compile");
  if (flags.compile_only) argv.push_back("--compile-only");
  argv.insert(argv.end(), hooks.worker_args.begin(), hooks.worker_args.end());
  return argv;
}

// The command that resumes the run in `out`: the directory alone (its plan holds the rest).
std::string resume_command(const std::string& out, const std::optional<ShardSpec>& shard = {}) {
  return "ptxbench run --out " + out + (shard ? " --shard " + shard->arg() : "");
}

Result<int> run_command(const RunFlags& flags, const GlobalOptions& globals,
                        const std::function<void(RunHooks&)>& adjust_hooks) {
  // Ctrl-C and SIGTERM stop the run cleanly (core/interrupt.h): children killed, nothing half
  // done committed, the resume command printed.
  install_interrupt_handlers();
  PTXB_RETURN_IF_ERROR(flags.scale.check());
  std::optional<ShardSpec> shard;
  if (!flags.scale.shard.empty()) {
    if (flags.out.empty())
      return make_error("usage", "--shard I/N works in an existing run directory: give --out DIR");
    PTXB_ASSIGN_OR_RETURN(shard, ShardSpec::parse(flags.scale.shard));
  }
  PTXB_ASSIGN_OR_RETURN(ExperimentConfig config, assemble_config(flags));
  // --gpus: one evaluation slot per GPU listed (concurrency.gpu), slot i on the i-th.
  if (!flags.scale.gpus.empty() && flags.scale.executor.empty())
    config.concurrency.gpu = static_cast<int>(flags.scale.gpus.size());
  PTXB_ASSIGN_OR_RETURN(TaskRegistry registry, TaskRegistry::load(globals.tasks_dirs));
  std::string packs_dir = config.packs_dir;
  if (packs_dir.empty()) {
    PTXB_ASSIGN_OR_RETURN(packs_dir, default_packs_dir());
  }
  PTXB_ASSIGN_OR_RETURN(PackLibrary packs, PackLibrary::load(packs_dir));
  PTXB_ASSIGN_OR_RETURN(ExperimentPlan plan, make_plan(config, registry, packs));
  // Prompts first: a pack that does not compose fails before a directory is made.
  PTXB_RETURN_IF_ERROR(build_task_prompts(plan, registry, packs));
  if (auto aids = load_prompt_aids(plan); !aids.ok()) return aids.error();

  // Clients before the directory too: a missing API key fails before anything is written.
  CurlHttpTransport transport;
  const bool live = ::isatty(STDERR_FILENO) != 0;
  ConsoleProgress progress(std::cerr, live, config.turns);
  std::vector<std::unique_ptr<ModelClient>> clients;
  std::vector<ModelClient*> models;
  for (const auto& model : config.models) {
    PTXB_ASSIGN_OR_RETURN(
        auto client,
        make_model_client(model, transport, [&](const std::string& line) { progress.note(line); }));
    models.push_back(client.get());
    clients.push_back(std::move(client));
  }

  EvalTools tools = EvalTools::discover();
  if (flags.compile_only)
    tools.gpu_disabled_reason = "--compile-only: compile and static analysis only";
  std::string out = flags.out.empty() ? "runs/" + replace_all(iso_utc_now(), ":", "") : flags.out;
  RunHooks hooks;
  hooks.make_evaluator = [&](const std::string& devices) {
    return std::make_unique<PipelineTurnEvaluator>(registry, globals.tasks_dirs, tools, devices);
  };
  adjust_hooks(hooks);
  if (!flags.scale.executor.empty()) {
    // Workers on other nodes find the directory by this path (a shared file system).
    out = absolute_path(out);
    return run_with_executor(flags.scale, plan, out, worker_argv(flags, globals, out, hooks));
  }

  std::unique_ptr<service::RemoteEvaluator> remote;
  service::SystemClock clock;
  SystemProcessRunner compile_processes;
  if (!flags.evaluators.empty()) {
    service::RemoteEvaluatorOptions options;
    options.urls = flags.evaluators;
    if (const char* token = std::getenv("PTXBENCH_SERVICE_TOKEN")) options.token = token;
    // The run's identity in every idempotency key: this run directory, resumed or not, finds
    // its turns again; another run of the same experiment is evaluated on its own.
    std::error_code ec;
    options.key_prefix = "run " + std::filesystem::absolute(out, ec).lexically_normal().string();
    // The compile split: each turn is compiled here and sent as kernel.so (re-checked there).
    if (!flags.remote_compile)
      options.prepare = [&](EvalRequest& r) {
        return service::compile_for_service(r, registry, globals.tasks_dirs, compile_processes);
      };
    remote = std::make_unique<service::RemoteEvaluator>(transport, options, clock);
  }
  EvaluatorFactory& make_evaluator = hooks.make_evaluator;
  std::vector<std::unique_ptr<TurnEvaluator>> evaluators;
  std::vector<TurnEvaluator*> slots;
  if (remote) {
    // As many turns in flight as the services have serving GPUs (at least concurrency.gpu):
    // each service queues and times them one per GPU.
    const int capacity = remote->capacity();
    if (capacity <= 0)
      std::cerr << "ptxbench: warning: no evaluation service answered with a serving GPU "
                   "worker yet; turns wait for one\n";
    for (int i = 0; i < std::max(config.concurrency.gpu, capacity); ++i)
      slots.push_back(remote.get());
  } else {
    for (const auto& devices : slot_devices(config.concurrency.gpu, flags.scale.gpus)) {
      evaluators.push_back(make_evaluator(devices));
      slots.push_back(evaluators.back().get());
    }
  }
  // A model answer that can only be compiled costs the same as one that is judged: without
  // GPU stages, refuse up front unless asked (--compile-only). The replay model costs nothing
  // and is exempt (the README's first command works on a machine without a GPU, exit 3).
  if (!flags.compile_only) {
    const std::string why = slots.front()->gpu_unavailable_reason();
    for (const auto& model : config.models)
      if (!why.empty() && !model.is_replay())
        return make_error("usage",
                          "model {}: the GPU stages cannot run here ({}), so every turn would "
                          "call the model and only compile its kernel; run where there is a "
                          "GPU, or give --compile-only to compile and analyse only",
                          model.name, why);
  }

  bool resumed = false;
  PTXB_ASSIGN_OR_RETURN(auto dir, RunDirectory::open(out, plan, resumed, shard));
  std::cerr << fmt::format(
      "run directory: {}{} ({}; resume with `{}`)\nplan: {}, {} × {}\n", out,
      shard ? ", shard " + shard->arg() : "", resumed ? "resuming" : "new",
      resume_command(out, shard), count_noun(static_cast<long long>(config.models.size()), "model"),
      count_noun(static_cast<long long>(plan.trajectories.size()), "trajectory"),
      count_noun(config.turns, "turn"));
  EvaluatorPool pool(slots);
  ExperimentServices services{registry, packs, models, pool, progress};
  // A shard worker runs its own trajectories only (agent/shard.h).
  const ExperimentPlan part = shard ? shard_plan(plan, *shard) : plan;
  PTXB_ASSIGN_OR_RETURN(RunSummary summary, run_experiment(part, *dir, services));

  if (const int signal_number = interrupt_signal(); signal_number != 0) {
    std::cerr << fmt::format(
        "ptxbench: error: interrupted by {}: {} of {} done, nothing half-done recorded; "
        "resume with: {}\n",
        signal_name(signal_number),
        count_noun(static_cast<long long>(dir->finished_turn_count(part)), "turn"),
        part.trajectories.size() * static_cast<std::size_t>(config.turns),
        resume_command(out, shard));
    return 128 + signal_number;  // the shell's convention for "ended by this signal"
  }
  std::cout << summary.table << std::flush;
  std::cerr << fmt::format("summary: {}/summary.json; metrics: ptxbench report {}\n", out, out);
  if (summary.unfinished > 0)
    return make_error("incomplete",
                      "{} of {} stopped on model or evaluation failures (see {}/summary.json); "
                      "resume them with: {}",
                      summary.unfinished,
                      count_noun(static_cast<long long>(part.trajectories.size()), "trajectory"),
                      shard ? shard_dir(out, *shard) : out, resume_command(out, shard));
  if (summary.gpu_skipped_turns > 0) {
    std::cerr << fmt::format(
        "ptxbench: {} compiled and analysed but their GPU stages were skipped (no GPU "
        "here): recorded as INFRA_ERROR (gpu_skipped), not as results\n",
        count_noun(static_cast<long long>(summary.gpu_skipped_turns), "turn"));
    return 3;
  }
  return 0;
}

}  // namespace

CommandSpec make_run_command(const Extension<RunHooks>& extension) {
  return {
      "run",
      "Run MiniPTXAgent: models × tasks × prompt variants × trajectories, multi-turn, into a "
      "resumable run directory",
      [extension](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
        auto flags = std::make_shared<RunFlags>();
        app.add_option("--config", flags->config_path,
                       "Experiment file: models, suite/tasks, variants, trajectories, turns, "
                       "concurrency, early stop, eval options (docs/agent.md)")
            ->check(CLI::ExistingFile);
        app.add_option("--model", flags->models,
                       "A model: replay (no API key), PROVIDER:MODEL[@URL] with PROVIDER one of "
                       "openai, anthropic, gemini, openrouter, together, vllm, sglang, or a "
                       "model name from --config; repeatable");
        app.add_option("--suite", flags->suite, "Run every task of this suite (paper-h100, ...)");
        app.add_option("--task", flags->tasks, "Run this task; repeatable");
        app.add_option("--variants", flags->variants,
                       "Prompt variants (knowledge-pack tags), comma-separated (default: each "
                       "task's own, see `ptxbench tasks show`)")
            ->delimiter(',');
        app.add_option("--trajectories", flags->trajectories,
                       "Trajectories per model × task × variant (default 4)")
            ->check(CLI::Range(1, 1000));
        app.add_option("--turns", flags->turns, "Turns per trajectory (default 8)")
            ->check(CLI::Range(1, 1000));
        app.add_flag("--compile-only", flags->compile_only,
                     "Compile and analyse each turn's kernel, never run it (no GPU stages; "
                     "turns are INFRA_ERROR gpu_skipped). Without it, a model other than "
                     "replay is refused where the GPU stages cannot run");
        app.add_option("--out", flags->out,
                       "Run directory (default runs/<UTC time>); an existing one with the "
                       "same experiment is resumed");
        app.add_option("--evaluator", flags->evaluators,
                       "Judge turns on these `ptxbench serve` services (comma-separated: the "
                       "least loaded, with fail-over) instead of here; token from "
                       "PTXBENCH_SERVICE_TOKEN")
            ->delimiter(',');
        app.add_flag("--remote-compile", flags->remote_compile,
                     "With --evaluator: send sources and let the services compile them "
                     "(default: compile here and send kernel.so, which they re-check)");
        app.add_option("--guidance", flags->guidance,
                       "Expert guidance appended to the task message: FILE for every task, or a "
                       "directory of TASK.md (or TASK.txt) per task (off by default)")
            ->check(CLI::ExistingPath);
        app.add_option("--retrieval", flags->retrieval,
                       "Notes of earlier fixes (`ptxbench fixit notes`): on a failing turn, the "
                       "most similar notes of the same task are appended to the feedback (off by "
                       "default)")
            ->check(CLI::ExistingFile);
        app.add_option("--retrieval-mode", flags->retrieval_mode,
                       "notes (default): the notes' failure, analysis and plan; notes+kernel: "
                       "also the best note's fixed kernel")
            ->check(CLI::IsMember({"notes", "notes+kernel"}));
        app.add_option("--retrieval-top-k", flags->retrieval_top_k,
                       "Notes appended per failing turn (default 3)")
            ->check(CLI::Range(1, kMaxRetrievalTopK));
        app.add_flag("--profiler-hints", flags->profiler_hints,
                     "Add profiler hints in words to the feedback of a passed kernel (off by "
                     "default)");
        app.footer(
            "Examples:\n"
            "  # the whole pipeline, no API key: reference kernels replayed as model answers\n"
            "  ptxbench run --model replay --suite paper-h100 --variants base --trajectories 1 "
            "--turns 2 --out runs/replay\n"
            "  # a hosted model (key from the environment only, never written anywhere)\n"
            "  OPENAI_API_KEY=... ptxbench run --model openai:gpt-5 --task gemm_n7168_k5120 --out "
            "runs/gpt5\n"
            "  # a local vLLM/SGLang server\n"
            "  ptxbench run --model vllm:Qwen/Qwen3-32B@http://localhost:8000/v1 --suite "
            "paper-h100 --out runs/qwen\n"
            "  # the paper's protocol from a file (3 variants x 4 trajectories x 8 turns)\n"
            "  ptxbench run --config examples/experiments/paper-h100.json --out runs/paper\n"
            "  # resume an interrupted run: the same command again, or only its directory\n"
            "  ptxbench run --out runs/paper\n"
            "  ptxbench report runs/paper   # the paper's metrics\n"
            "  # prompt-time baselines: expert guidance, retrieval of earlier fixes\n"
            "  ptxbench run --model vllm:Qwen/Qwen3-32B@http://localhost:8000/v1 --suite "
            "paper-h100 --guidance guidance/ --retrieval notes.jsonl --retrieval-mode "
            "notes+kernel --out runs/qwen-rag\n"
            "  # turns judged by evaluation services (least loaded first, fail-over)\n"
            "  ptxbench run --model replay --suite paper-h100 --evaluator "
            "http://gpu1:8470,http://gpu2:8470 --out runs/remote\n"
            "  # a Slurm job array of 32 shards, one GPU each (docs/cluster.md); again to resume\n"
            "  ptxbench run --config examples/experiments/paper-h100.json --out /shared/runs/paper "
            "--executor slurm --partition gpu --gres gpu:1 --time 06:00:00\n"
            "  # the same shards on the GPUs of this machine, one worker per GPU\n"
            "  ptxbench run --config examples/experiments/paper-h100.json --out runs/paper "
            "--executor local --gpus 0,1,2,3\n"
            "  ptxbench status runs/paper   # per shard: state, turns, failures, GPU-hours, ETA\n"
            "Exit codes: 0 all trajectories finished; 1 some stopped on failures (resumable); "
            "3 GPU stages skipped (no GPU); 2 usage; 130/143 interrupted (Ctrl-C/SIGTERM, "
            "resumable).");
        add_scale_out_options(app, flags->scale);
        auto adjust_hooks = install(extension, app);
        return [flags, adjust_hooks, &globals]() -> Result<int> {
          return run_command(*flags, globals, adjust_hooks);
        };
      }};
}

}  // namespace ptxb::cli
