// Submit-to-complete throughput of `ptxbench serve` with fake GPU workers (no GPU work: what
// is measured is the service itself: HTTP, the SQLite store, the queue, the worker pipes).
//
//   build/bench/service_bench build/ptxbench-testing [JOBS=4000] [CLIENTS=32] [WORKERS=4]
//
// Starts the service on a free loopback port, uploads one kernel, then CLIENTS threads submit
// JOBS jobs in all (each its own seed) and long-poll each until done. Prints jobs/s from the
// first submit to the last completion. Results: bench/results/service.md.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "core/fs.h"
#include "llm/http_transport.h"
#include "service/service_client.h"

int main(int argc, char** argv) {
  using namespace ptxb;
  if (argc < 2) {
    std::cerr << "usage: service_bench PTXBENCH_TESTING [JOBS] [CLIENTS] [WORKERS]\n";
    return 2;
  }
  const int jobs = argc > 2 ? std::atoi(argv[2]) : 4000;
  const int clients = argc > 3 ? std::atoi(argv[3]) : 32;
  const int workers = argc > 4 ? std::atoi(argv[4]) : 4;
  const std::string dir = *make_temp_directory("ptxb-service-bench");
  std::string gpus;
  for (int i = 0; i < workers; ++i) gpus += (i ? "," : "") + std::to_string(i);
  // One client whose rate and quota are above what is measured (the default client limits,
  // 200 requests/s, would be measured instead).
  constexpr const char* kToken = "bench-token-0123456789";
  std::ofstream(dir + "/tokens") << "bench " << kToken
                                 << " rate=1000000 burst=1000000 quota=1000000\n";
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen((dir + "/serve.out").c_str(), "w", stdout);
    std::freopen((dir + "/serve.err").c_str(), "w", stderr);
    ::execl(argv[1], argv[1], "serve", "--listen", "127.0.0.1:0", "--db",
            (dir + "/jobs.db").c_str(), "--gpus", gpus.c_str(), "--tokens",
            (dir + "/tokens").c_str(), "--test-fake-workers", dir.c_str(), "--no-canary", nullptr);
    ::_exit(127);
  }
  std::string url;
  for (int i = 0; i < 200 && url.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto out = read_file(dir + "/serve.out", 1 << 16);
    if (out.ok() && out->find("http://") != std::string::npos) {
      const auto at = out->find("http://");
      url = out->substr(at, out->find(' ', at) - at);
    }
  }
  if (url.empty()) {
    std::cerr << "the service did not start\n";
    return 1;
  }
  CurlHttpTransport transport;
  EvalRequest request;
  request.task = "gemm_n7168_k5120";
  request.source = "// ptxbench-fake-eval: status=PASSED\nvoid run() {}\n";
  {
    service::ServiceClient warm(transport, url, kToken);
    if (auto first = warm.evaluate(request, "", 30); !first.ok()) {
      std::cerr << first.error().message << "\n";
      return 1;
    }
  }
  std::atomic<int> next{0}, failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      service::ServiceClient client(transport, url, kToken);
      std::vector<std::string> ids;
      for (int j; (j = next++) < jobs;) {
        EvalRequest r = request;
        r.options.seed = static_cast<std::uint64_t>(j) + 2;
        auto job = client.submit(r, "");
        if (job.ok())
          ids.push_back((*job)["id"]);
        else
          ++failed;
      }
      for (const auto& id : ids) {
        auto done = client.wait(id, 120);
        if (!done.ok() || (*done)["state"] != "done") ++failed;
      }
    });
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  remove_tree(dir);
  std::printf("jobs %d, clients %d, fake workers %d, failed %d\n", jobs, clients, workers,
              failed.load());
  std::printf("submit-to-complete: %.2f s, %.0f jobs/s\n", seconds, jobs / seconds);
  return failed.load() == 0 ? 0 : 1;
}
