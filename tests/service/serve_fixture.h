// The fixture of the service's end-to-end tests: `ptxbench-testing serve` as a real process on
// loopback with fake GPU workers (--test-fake-workers: each worker is `serve-worker
// --test-fake-eval`, whose FakeTurnEvaluator logs "start TAG" per evaluation into the test's
// folder), and the token file its clients use.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../support/child_process.h"
#include "../support/tree_paths.h"
#include "core/fs.h"
#include "core/strings.h"
#include "eval/eval_types.h"
#include "llm/http_transport.h"

namespace ptxb {

using testing::spawn_process;
using testing::wait_for_exit;
using testing::wait_until;

constexpr const char* kAliceToken = "alice-token-0123456789";
constexpr const char* kBobToken = "bob-token-0123456789ab";
constexpr const char* kCarolToken = "carol-token-0123456789";
constexpr const char* kSlowToken = "slow-token-0123456789a";

// PIDs of the processes whose command line contains `needle` (the test's unique folder).
inline std::vector<pid_t> pids_with(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline.find(needle) != std::string::npos && std::stoi(name) != ::getpid())
      out.push_back(std::stoi(name));
  }
  return out;
}

// Rates above what the tests send: the default client limit (200 requests/s) would turn the
// many-client tests into tests of Retry-After sleeps.
inline void write_tokens(const std::string& dir) {
  constexpr const char* kFast = " rate=100000 burst=100000";
  std::ofstream(dir + "/tokens") << "alice " << kAliceToken << kFast << "\nbob " << kBobToken
                                 << kFast << "\ncarol " << kCarolToken << kFast << "\nslow "
                                 << kSlowToken << " rate=1 burst=2\n";
}

// How a test service runs: fake workers (the default), or the real evaluation pipeline (on a
// machine without a GPU it compiles and analyses, then reports the GPU stages skipped).
struct ServeSetup {
  bool fake_workers = true;
  std::vector<std::string> global_args;  // before `serve`, e.g. --tasks-dir
  std::vector<std::string> env;          // more KEY=VALUE for the service and its workers
  std::string listen = "127.0.0.1:0";    // a fixed port: a restart keeps its URL
};

// Starts `ptxbench-testing serve` over `dir` (store, tokens, fake workers' log) with `workers`
// workers; sets `pid` and returns the base URL it prints.
inline std::string start_serve(const std::string& dir, int workers,
                               const std::vector<std::string>& extra, int start_number, pid_t& pid,
                               const ServeSetup& setup = {}) {
  std::vector<std::string> argv = {tree::testing_cli()};
  argv.insert(argv.end(), setup.global_args.begin(), setup.global_args.end());
  argv.insert(argv.end(), {"serve", "--listen", setup.listen, "--db", dir + "/jobs.db", "--tokens",
                           dir + "/tokens"});
  if (setup.fake_workers) argv.insert(argv.end(), {"--test-fake-workers", dir});
  std::string gpus;
  for (int i = 0; i < workers; ++i) gpus += (i ? "," : "") + std::to_string(i);
  argv.insert(argv.end(), {"--gpus", gpus});
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::string out = dir + "/serve.out." + std::to_string(start_number);
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  env.insert(env.end(), setup.env.begin(), setup.env.end());
  pid = spawn_process(argv, env, out, dir + "/serve.err");
  std::string url;
  EXPECT_TRUE(wait_until(
      [&] {
        auto text = read_file(out, 1 << 16);
        if (!text.ok()) return false;
        const auto at = text->find("http://");
        if (at == std::string::npos) return false;
        url = trim(text->substr(at, text->find(' ', at) - at));
        return true;
      },
      std::chrono::seconds(20)))
      << *read_file(dir + "/serve.err", 1 << 16);
  return url;
}

// Evaluations the fake workers of the service over `dir` started, by tag ("start TAG" lines;
// "-" is the canary or an untagged kernel).
inline std::map<std::string, int> evaluations_in(const std::string& dir) {
  std::map<std::string, int> count;
  auto log = read_file(dir + "/evals.log", 64 << 20);
  if (log.ok())
    for (const auto& line : split_lines(*log))
      if (line.rfind("start ", 0) == 0 && line != "start -") ++count[line.substr(6)];
  return count;
}

// One more service for the tests that need several (fail-over, least-loaded, fronting).
class ServeProcess {
 public:
  ServeProcess() : dir_(*make_temp_directory("ptxb-serve-e2e")) { write_tokens(dir_); }
  ~ServeProcess() {
    stop();
    remove_tree(dir_);
  }
  std::string start(int workers, const std::vector<std::string>& extra = {},
                    const ServeSetup& setup = {}) {
    url_ = start_serve(dir_, workers, extra, ++starts_, pid_, setup);
    return url_;
  }
  void stop(int signal = SIGTERM) {
    if (pid_ <= 0) return;
    ::kill(pid_, signal);
    wait_for_exit(pid_, std::chrono::seconds(10));
    pid_ = -1;
  }
  std::map<std::string, int> evaluations() const { return evaluations_in(dir_); }
  const std::string& dir() const { return dir_; }
  const std::string& url() const { return url_; }

 private:
  std::string dir_, url_;
  pid_t pid_ = -1;
  int starts_ = 0;
};

// `ptxbench` (the shipped CLI) as a user runs it, with the service token in the environment;
// output in DIR/cli.out and DIR/cli.err.
struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

inline CliRun run_cli(const std::string& dir, const std::vector<std::string>& args,
                      const std::string& token = kAliceToken,
                      const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> argv = {tree::cli()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + dir};
  if (!token.empty()) env.push_back("PTXBENCH_SERVICE_TOKEN=" + token);
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  const pid_t pid = spawn_process(argv, env, dir + "/cli.out", dir + "/cli.err");
  CliRun run;
  run.exit_code = wait_for_exit(pid, std::chrono::seconds(120));
  auto text = [](const std::string& path) {
    auto r = read_file(path, 16 << 20);
    return r.ok() ? *r : std::string();
  };
  run.out = text(dir + "/cli.out");
  run.err = text(dir + "/cli.err");
  return run;
}

class ServeE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *make_temp_directory("ptxb-serve-e2e");
    write_tokens(dir_);
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      wait_for_exit(pid_, std::chrono::seconds(10));
    }
    remove_tree(dir_);
  }
  // Starts the service; returns its base URL.
  std::string start(int workers, const std::vector<std::string>& extra = {}) {
    return start_serve(dir_, workers, extra, ++starts_, pid_);
  }
  EvalRequest request(const std::string& directive) {
    EvalRequest r;
    r.task = "gemm_n7168_k5120";
    r.source = "// ptxbench-fake-eval: " + directive + "\nvoid run() {}\n";
    return r;
  }
  std::map<std::string, int> evaluations() { return evaluations_in(dir_); }

  std::string dir_;
  pid_t pid_ = -1;
  int starts_ = 0;
  CurlHttpTransport transport_;
};

}  // namespace ptxb
