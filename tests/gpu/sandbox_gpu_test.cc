// The sandbox on a GPU (label gpu; H200): a real `ptxbench eval` runs the candidate's runner,
// the reference runner, Nsight Compute and compute-sanitizer inside ptxbench-sandbox
// (docs/integrity.md), and they still work: CUDA IPC into the runner, CUPTI, ncu's injection
// over the namespace's loopback, the sanitizer. And a candidate whose host code makes a raw
// `socket` system call (inline assembly: no imported symbol, so no static check sees it) is
// stopped by the seccomp filter alone.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include "../support/tree_paths.h"
#include "core/fs.h"
#include "core/json_io.h"
#include "core/process.h"
#include "core/strings.h"

namespace ptxb {
namespace {

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// `ptxbench` as built, or $PTXB_CLI_PATH (an installed copy: scripts/gpu_check.sh); it finds
// ptxbench-sandbox in its helpers folder.
std::string cli_path() {
  return tree::cli();
}

Json eval_json(const std::string& kernel, const std::vector<std::string>& extra) {
  ProcessSpec spec;
  spec.argv = {cli_path(), "eval", kernel, "--task", "gemm_n7168_k5120", "--json", "--seed", "5"};
  spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
  spec.timeout = std::chrono::seconds(600);
  spec.output_cap_bytes = 64u << 20;
  auto ran = SystemProcessRunner().run(spec);
  EXPECT_TRUE(ran.ok());
  if (!ran.ok()) return Json();
  auto parsed = parse_json(ran->stdout_text, "ptxbench eval --json");
  EXPECT_TRUE(parsed.ok()) << ran->describe() << "\nstderr: " << ran->stderr_text.substr(0, 3000);
  return parsed.ok() ? *parsed : Json();
}

std::string summary(const Json& r) {
  if (!r.is_object()) return "no result";
  return fmt::format("status {} [{}] {}\nsandbox {}\nworkload {}", r.value("status", ""),
                     r.value("reason", ""), r.value("message", ""),
                     r["environment"].value("sandbox", Json()).dump().substr(0, 3000),
                     r.value("workloads", Json()).dump().substr(0, 3000));
}

class SandboxGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(SandboxGpu, SolutionPassesSandboxedWithNcuAndTheSanitizer) {
  const std::string kernel =
      tree::source_dir() + "/solutions/gemm_n7168_k5120/rung2_warp_specialized.cu";
  const Json r = eval_json(kernel, {"--sanitize"});
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.value("status", ""), "PASSED") << summary(r);
  EXPECT_EQ(r["target_instructions"]["verdict"], "dynamic_present")
      << r["target_instructions"].dump();
  EXPECT_TRUE(r["sanitizer"].is_object()) << "compute-sanitizer did not run";
  EXPECT_EQ(r["sanitizer"].value("error_count", -1), 0) << r["sanitizer"].dump();
  EXPECT_EQ(r["sanitizer"].value("target_failed", true), false) << r["sanitizer"].dump();
  const Json& sandbox = r["environment"]["sandbox"];
  EXPECT_EQ(sandbox.value("enabled", false), true);
  const Json& report = sandbox["report"];
  if (::geteuid() == 0) {
    EXPECT_EQ(report.value("Uid", ""), "65534\t65534\t65534\t65534");
  }
  EXPECT_EQ(report.value("CapEff", ""), "0000000000000000");
  EXPECT_EQ(report.value("Seccomp", ""), "2");
  EXPECT_EQ(r["traces"][0]["evaluation"]["ptxbench"]["sandboxed"], true);
  std::cout << "[ sandbox ] stages: " << r["stage_ms"].dump() << "\n";
}

TEST_F(SandboxGpu, RawSocketCallOfTheCandidateIsTrapped) {
  auto source = read_file(tree::source_dir() + "/examples/gemm_simt.cu", 1u << 20);
  ASSERT_TRUE(source.ok());
  // The example's `run` becomes a helper; the new `run` makes socket(AF_INET, SOCK_STREAM, 0)
  // through the syscall instruction (x86-64: rax 41), then computes C only if it got a socket.
  std::string text = replace_all(*source, "void run(", "static void honest_run(");
  text += R"(
void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  long fd = 41;
  asm volatile("syscall" : "+a"(fd) : "D"(2L), "S"(1L), "d"(0L) : "rcx", "r11", "memory");
  if (fd < 0) return;
  honest_run(A, B, C, M, N, K, stream);
}
)";
  auto dir = make_temp_directory("ptxb-sandbox-gpu");
  ASSERT_TRUE(dir.ok());
  const std::string kernel = *dir + "/kernel.cu";
  ASSERT_TRUE(write_file_atomic(kernel, text).ok());
  const Json r = eval_json(kernel, {"--no-ncu"});
  EXPECT_EQ(r.value("status", ""), "FORBIDDEN") << summary(r);
  EXPECT_EQ(r.value("reason", ""), "sandbox_seccomp:socket") << summary(r);
  EXPECT_EQ(r["compile"].value("status", ""), "OK");  // nothing static saw it
  remove_tree(*dir);
}

}  // namespace
}  // namespace ptxb
