// compile_bench: cold compile time of a typical kernel per architecture (cache bypassed) versus
// the time of a cache hit, and their ratio. Target: a cache hit under 50 ms.
//   build/bench/compile_bench [--hits N]
// Results: bench/results/compile.md (command, machine, date).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "compile/compiler.h"
#include "core/fs.h"

namespace {

using namespace ptxb;

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

int run_bench(int hits) {
  SystemProcessRunner runner;
  auto toolchain = Toolchain::discover(runner);
  if (!toolchain.ok()) {
    std::cerr << "compile_bench: " << toolchain.error().message << "\n";
    return 1;
  }
  auto cache_dir = make_temp_directory("ptxb-compile-bench");
  if (!cache_dir.ok()) return 1;
  struct Case {
    const char* arch;
    const char* file;
  };
  RunSignature signature;
  signature.parameters = {{AbiParameter::Kind::kOutput, "float*", "out", "out", false},
                          {AbiParameter::Kind::kStream, "cudaStream_t", "stream", "", false}};
  std::cout << "toolchain: " << toolchain->info().fingerprint() << "\n";
  std::cout << "| arch | kernel | cold compile (ms) | cache hit median (ms) | hit max (ms) | "
               "cold/hit |\n";
  std::cout << "|---|---|---|---|---|---|\n";
  int status = 0;
  for (const Case& c : {Case{"sm_90a", "hopper_two_kernels.cu"}, Case{"sm_100a", "tcgen05.cu"}}) {
    auto source =
        read_file(std::string(PTXB_TESTDATA_DIR) + "/compile/kernels/" + c.file, 1u << 20);
    if (!source.ok()) return 1;
    CompileRequest request;
    request.source =
        *source + "\nvoid run(float* out, cudaStream_t stream) { (void)out; (void)stream; }\n";
    request.signature = signature;
    request.options = CompileOptions::defaults();
    request.options.arch = c.arch;
    request.options.cache_dir = *cache_dir;
    request.options.use_cache = false;
    auto start = std::chrono::steady_clock::now();
    auto cold = compile_solution(request, *toolchain);
    const double cold_ms = elapsed_ms(start);
    if (!cold.ok() || !cold->ok()) {
      std::cerr << "compile_bench: cold compile failed: "
                << (cold.ok() ? cold->message : cold.error().message) << "\n";
      return 1;
    }
    request.options.use_cache = true;
    std::vector<double> hit_ms;
    for (int i = 0; i < hits; ++i) {
      start = std::chrono::steady_clock::now();
      auto hit = compile_solution(request, *toolchain);
      hit_ms.push_back(elapsed_ms(start));
      if (!hit.ok() || !hit->from_cache) {
        std::cerr << "compile_bench: expected a cache hit\n";
        return 1;
      }
    }
    std::sort(hit_ms.begin(), hit_ms.end());
    const double median = hit_ms[hit_ms.size() / 2];
    std::cout << fmt::format("| {} | {} | {:.0f} | {:.2f} | {:.2f} | {:.0f}x |\n", c.arch, c.file,
                             cold_ms, median, hit_ms.back(), cold_ms / median);
    if (median >= 50.0) status = 2;  // misses the target; reported, not a crash
  }
  remove_tree(*cache_dir);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  int hits = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--hits") == 0 && i + 1 < argc)
      hits = std::max(1, std::atoi(argv[++i]));
    else {
      std::cerr << "usage: compile_bench [--hits N]\n";
      return 2;
    }
  }
  return run_bench(hits);
}
