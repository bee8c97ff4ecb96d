// `ptxbench serve [--listen HOST:PORT] [--allow-remote] [--gpus LIST] [--db PATH] [--tokens FILE]
//                 [--threads N] [--max-upload-bytes N] [--retention-hours H] [--job-timeout S]
//                 [--max-attempts N] [--canary-every N] [--canary-drift F] [--no-canary]
//                 [--upstream URL,... [--backend-grace S]]`
// The evaluation service (docs/service.md): the HTTP/JSON API of src/service over one worker
// process per GPU, or with --upstream a front that owns no GPU and forwards to those services
// (service/upstream_service.h; its token on them from PTXBENCH_UPSTREAM_TOKEN). `ptxbench
// serve-worker` is that worker process (started by serve, not by people): it runs the `ptxbench
// eval` pipeline for each request on its stdin.
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "agent/turn_evaluator.h"
#include "cli/command.h"
#include "core/fs.h"
#include "core/install_layout.h"
#include "core/strings.h"
#include "env/gpu_probe.h"
#include "llm/http_transport.h"
#include "service/eval_service.h"
#include "service/http_api.h"
#include "service/process_worker.h"
#include "service/sqlite_job_store.h"
#include "service/upstream_service.h"
#include "service/worker_protocol.h"

namespace ptxb::cli {
namespace {

struct ServeFlags {
  std::string listen = "127.0.0.1:8470";
  bool allow_remote = false;
  std::string gpus;
  std::string db = "ptxbench-serve.db";
  std::string tokens;
  int threads = 128;
  std::size_t max_upload_bytes = 16u << 20;  // a prebuilt kernel.so or its PTX
  double retention_hours = 168;
  double job_timeout = service::ServiceOptions{}.job_timeout_seconds;
  int max_attempts = 2;
  int canary_every = service::CanaryPolicy{}.every_jobs;
  double canary_drift = service::CanaryPolicy{}.max_drift;
  bool no_canary = false;
  std::vector<std::string> upstream;
  double backend_grace = service::UpstreamOptions{}.backend_grace_seconds;
};

Result<std::pair<std::string, int>> parse_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error("usage", "--listen: expected HOST:PORT, got \"{}\"", listen);
  try {
    const int port = std::stoi(listen.substr(colon + 1));
    if (port < 0 || port > 65535) throw std::out_of_range("port");
    return std::make_pair(listen.substr(0, colon), port);
  } catch (const std::exception&) {
    return make_error("usage", "--listen: bad port in \"{}\"", listen);
  }
}

// The GPUs to serve: --gpus, else every GPU the driver shows.
Result<std::vector<std::string>> serve_gpus(const std::string& flag) {
  std::vector<std::string> gpus;
  if (!flag.empty()) {
    for (const auto& g : split(flag, ','))
      if (!trim(g).empty()) gpus.push_back(trim(g));
    return gpus;
  }
  GpuProbe probe = probe_gpus();
  for (const auto& gpu : probe.gpus) gpus.push_back(std::to_string(gpu.index));
  if (gpus.empty())
    return make_error("usage", "no GPU found ({}); name the workers with --gpus 0,1,...",
                      join(probe.problems, "; "));
  return gpus;
}

service::HttpApi* g_api = nullptr;  // for the SIGINT/SIGTERM handler thread

// Serves `api` until SIGINT/SIGTERM (queued jobs stay in the store).
void serve_until_signalled(service::HttpApi& api, const std::string& banner) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  g_api = &api;
  std::thread signal_thread([stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (g_api) g_api->stop();
  });
  signal_thread.detach();
  std::cout << banner << std::endl;
  api.serve();
  g_api = nullptr;
}

// --upstream: the front of several services. It validates requests against its own task
// catalogue (the backends' must hold the same tasks) and keeps its jobs, artifacts and the
// ledger of where each job went in --db.
Result<int> serve_upstream(const ServeFlags& f, const TaskRegistry& registry,
                           service::HttpOptions http, const std::string& host) {
  service::UpstreamOptions options;
  for (const auto& url : f.upstream) {
    const std::string trimmed = trim(url);
    if (trimmed.rfind("http://", 0) != 0 && trimmed.rfind("https://", 0) != 0)
      return make_error("usage", "--upstream: \"{}\" is not an http:// or https:// URL", url);
    options.backends.push_back(trimmed);
  }
  if (options.backends.empty()) return make_error("usage", "--upstream: no URL given");
  // Never a flag: it would show in `ps` (as PTXBENCH_SERVICE_TOKEN for the clients).
  if (const char* token = std::getenv("PTXBENCH_UPSTREAM_TOKEN")) options.token = token;
  options.backend_grace_seconds = f.backend_grace;
  options.retention_seconds = f.retention_hours * 3600;
  options.max_waiters = std::max(1, f.threads - 16);
  PTXB_ASSIGN_OR_RETURN(auto store, service::SqliteJobStore::open(f.db));
  PTXB_ASSIGN_OR_RETURN(auto ledger, service::UpstreamLedger::open(f.db));
  service::ArtifactStore artifacts(f.db + ".artifacts", f.max_upload_bytes);
  PTXB_RETURN_IF_ERROR(artifacts.init());
  CurlHttpTransport transport;
  service::SystemClock clock;
  service::UpstreamService front(*store, *ledger, artifacts, registry, transport, clock, options);
  service::HttpApi api(front, registry, clock, std::move(http));
  PTXB_ASSIGN_OR_RETURN(int port, api.bind());
  PTXB_RETURN_IF_ERROR(front.start());
  serve_until_signalled(api, fmt::format("ptxbench serve: listening on http://{}:{} (front of {} "
                                         "service{}, store {})",
                                         host, port, options.backends.size(),
                                         options.backends.size() == 1 ? "" : "s", f.db));
  front.stop();
  return 0;
}

}  // namespace

CommandSpec make_serve_command(const Extension<ServeWorkerCommand>& extension) {
  return {
      "serve",
      "Run the evaluation service: HTTP/JSON API, durable queue, one worker per GPU "
      "(docs/service.md)",
      [extension](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
        auto f = std::make_shared<ServeFlags>();
        app.add_option("--listen", f->listen, "HOST:PORT to listen on (port 0: any free port)")
            ->capture_default_str();
        app.add_flag("--allow-remote", f->allow_remote,
                     "Allow a non-loopback --listen address (needs --tokens)");
        app.add_option("--gpus", f->gpus,
                       "GPUs to serve, one worker each: 0,1,... "
                       "(default: every GPU found)");
        app.add_option("--db", f->db, "SQLite job store; artifacts go to PATH.artifacts/")
            ->capture_default_str();
        app.add_option("--tokens", f->tokens,
                       "Bearer tokens: NAME TOKEN [rate=R] [burst=B] [quota=Q] per line");
        app.add_option("--threads", f->threads, "HTTP threads (each long-poll holds one)")
            ->check(CLI::Range(8, 4096))
            ->capture_default_str();
        app.add_option("--max-upload-bytes", f->max_upload_bytes, "Largest artifact accepted")
            ->capture_default_str();
        app.add_option("--retention-hours", f->retention_hours,
                       "Delete finished jobs and unused artifacts after this long")
            ->capture_default_str();
        app.add_option("--job-timeout", f->job_timeout,
                       "Seconds one evaluation may take before its worker is killed")
            ->capture_default_str();
        app.add_option("--max-attempts", f->max_attempts,
                       "Dispatches of a job whose worker crashed or hung before it fails")
            ->check(CLI::Range(1, 10))
            ->capture_default_str();
        app.add_option("--canary-every", f->canary_every,
                       "Jobs between calibration canaries per GPU (0: only at start)")
            ->capture_default_str();
        app.add_option("--canary-drift", f->canary_drift, "Relative canary drift that drains a GPU")
            ->capture_default_str();
        app.add_flag("--no-canary", f->no_canary, "Run no calibration canary");
        auto* upstream =
            app.add_option("--upstream", f->upstream,
                           "Front several services instead of serving GPUs: forward jobs to "
                           "these URLs by free GPU capacity (their token from "
                           "PTXBENCH_UPSTREAM_TOKEN)")
                ->delimiter(',');
        app.add_option("--backend-grace", f->backend_grace,
                       "With --upstream: seconds a backend may be unreachable (or without a "
                       "serving GPU) before its jobs are moved or failed")
            ->needs(upstream)
            ->capture_default_str();
        auto adjust_worker = install(extension, app);
        return [f, adjust_worker, &globals]() -> Result<int> {
          PTXB_ASSIGN_OR_RETURN(auto listen, parse_listen(f->listen));
          const bool loopback = service::is_loopback_host(listen.first);
          if (!loopback && !f->allow_remote)
            return make_error("usage",
                              "--listen {}: not a loopback address; add --allow-remote to "
                              "serve other machines",
                              listen.first);
          if (!loopback && f->tokens.empty())
            return make_error("usage",
                              "--allow-remote needs --tokens (no anonymous access "
                              "from other machines)");
          PTXB_ASSIGN_OR_RETURN(TaskRegistry registry, TaskRegistry::load(globals.tasks_dirs));
          if (!f->upstream.empty() && !f->gpus.empty())
            return make_error("usage", "--upstream fronts other services: it serves no --gpus");

          service::HttpOptions http;
          http.host = listen.first;
          http.port = listen.second;
          http.threads = f->threads;
          http.max_upload_bytes = f->max_upload_bytes;
          if (!f->tokens.empty()) {
            PTXB_ASSIGN_OR_RETURN(http.tokens,
                                  service::TokenTable::load(f->tokens, service::ClientLimits{}));
          }
          if (!f->upstream.empty()) return serve_upstream(*f, registry, http, listen.first);
          PTXB_ASSIGN_OR_RETURN(std::vector<std::string> gpus, serve_gpus(f->gpus));
          service::ServiceOptions options;
          options.max_attempts = f->max_attempts;
          options.job_timeout_seconds = f->job_timeout;
          options.retention_seconds = f->retention_hours * 3600;
          options.canary_enabled = !f->no_canary;
          options.canary.every_jobs = f->canary_every;
          options.canary.max_drift = f->canary_drift;
          // Long-polls may hold at most this many HTTP threads; the rest serve everything else.
          options.max_waiters = std::max(1, f->threads - 16);

          PTXB_ASSIGN_OR_RETURN(auto store, service::SqliteJobStore::open(f->db));
          service::ArtifactStore artifacts(f->db + ".artifacts", f->max_upload_bytes);
          PTXB_RETURN_IF_ERROR(artifacts.init());

          ServeWorkerCommand worker_command;
          // --tasks-dir is a global option: before the subcommand.
          worker_command.argv = {std::filesystem::read_symlink("/proc/self/exe").string()};
          for (const auto& dir : globals.tasks_dirs) {
            worker_command.argv.push_back("--tasks-dir");
            worker_command.argv.push_back(dir);
          }
          worker_command.argv.push_back("serve-worker");
          adjust_worker(worker_command);
          std::vector<std::unique_ptr<service::Worker>> workers;
          for (const auto& gpu : gpus) {
            auto argv = worker_command.argv;
            argv.insert(argv.end(), {"--gpu", gpu});
            workers.push_back(std::make_unique<service::ProcessWorker>("gpu" + gpu, argv, gpu));
          }
          service::SystemClock clock;
          service::EvalService svc(*store, artifacts, registry, std::move(workers), clock, options);
          service::HttpApi api(svc, registry, clock, http);
          PTXB_ASSIGN_OR_RETURN(int port, api.bind());
          PTXB_RETURN_IF_ERROR(svc.start());

          serve_until_signalled(
              api,
              fmt::format("ptxbench serve: listening on http://{}:{} ({} worker{}, store {})",
                          listen.first, port, gpus.size(), gpus.size() == 1 ? "" : "s", f->db));
          svc.stop();
          return 0;
        };
      }};
}

namespace {

// The worker's half of "workers die with the service": serve starts it with SIGTERM as its
// parent-death signal; this thread takes that signal, kills the process groups of the
// evaluation processes it started (the supervisor and its runners: each leads its own group,
// core/process.h) and exits.
void kill_children_on_sigterm() {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);  // before any other thread exists
  std::thread([term] {
    int sig = 0;
    sigwait(&term, &sig);
    const std::string me = std::to_string(::getpid());
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string pid = entry.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      auto stat = read_proc_file("/proc/" + pid + "/stat");
      if (!stat.ok()) continue;
      // Fields after the command's closing parenthesis: state, ppid, ...
      const auto close = stat->rfind(')');
      if (close == std::string::npos) continue;
      const auto fields = split(trim(stat->substr(close + 1)), ' ');
      if (fields.size() > 1 && fields[1] == me) {
        ::kill(-std::stoi(pid), SIGKILL);
        ::kill(std::stoi(pid), SIGKILL);
      }
    }
    ::_exit(128 + SIGTERM);
  }).detach();
}

// The canary's kernel: a `run` with an empty body; the library reference runs in its slot
// (EvalOptions::reference_as_candidate), so what is timed is cuBLASLt on this GPU.
constexpr const char* kCanaryTask = "gemm_n7168_k5120";

Result<double> measure_canary(TurnEvaluator& evaluator, const TaskRegistry& registry, int gpu) {
  // A restarted service must not time anything while an evaluation of its previous life (or
  // anyone else) still uses the GPU: wait for it to be idle, up to a minute.
  for (int tries = 0;; ++tries) {
    GpuProbe probe = probe_gpus();
    unsigned others = 0;
    for (const auto& g : probe.gpus)
      if (g.index == gpu) others = g.compute_processes;
    if (others == 0) break;
    if (tries >= 60)
      return make_error("gpu_busy", "GPU {} still runs {} other compute processes", gpu, others);
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(kCanaryTask));
  EvalRequest request;
  request.task = task->name;
  request.source = "#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n#include <cstdint>\n" +
                   make_run_signature(task->definition).declaration() + " {}\n";
  request.options.ncu = false;
  request.options.reference_as_candidate = true;
  PTXB_ASSIGN_OR_RETURN(EvalResult result, evaluator.evaluate(request));
  if (result.workloads.empty() || !result.workloads.front().reference_timing)
    return make_error("canary", "the canary evaluation timed no reference ({}: {})",
                      ptxb_status_name(result.status), result.message);
  return result.workloads.front().reference_timing->median_ms;
}

}  // namespace

CommandSpec make_serve_worker_command(const Extension<EvaluatorFactory>& extension) {
  return {"serve-worker",
          "Internal: one GPU worker of `ptxbench serve` (requests on stdin, results on stdout)",
          [extension](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
            auto gpu = std::make_shared<int>(0);
            app.add_option("--gpu", *gpu, "The GPU this worker serves (its CUDA device index)");
            auto adjust = install(extension, app);
            return [gpu, adjust, &globals]() -> Result<int> {
              kill_children_on_sigterm();
              PTXB_ASSIGN_OR_RETURN(TaskRegistry registry, TaskRegistry::load(globals.tasks_dirs));
              // CUDA_VISIBLE_DEVICES is already this GPU (set by serve): "" inherits it.
              EvaluatorFactory make = [&](const std::string&) -> std::unique_ptr<TurnEvaluator> {
                return std::make_unique<PipelineTurnEvaluator>(registry, globals.tasks_dirs,
                                                               EvalTools::discover(), "");
              };
              adjust(make);
              std::unique_ptr<TurnEvaluator> evaluator = make("");
              const int device = *gpu;
              return service::serve_worker_loop(std::cin, std::cout, *evaluator, [&]() {
                return measure_canary(*evaluator, registry, device);
              });
            };
          }};
}

}  // namespace ptxb::cli
