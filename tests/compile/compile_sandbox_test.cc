// The sandboxed compile stage (compile/compile_sandbox.h, docs/integrity.md "Compile stage"):
// file directives, limits, staging cleanup, the log sanitizer. The unit tests need nothing; the
// pipeline tests need nvcc and a kernel that allows namespaces (skipped otherwise). Limits are
// set small here so that every bomb ends in seconds.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "compile/compile_sandbox.h"
#include "compile/compiler.h"
#include "compile/forbidden.h"
#include "compile/log_sanitizer.h"
#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// ---- the static scan ----

std::vector<std::string> directive_items(const std::string& source) {
  std::vector<std::string> out;
  for (const auto& f : check_file_directives(source, "kernel.cu")) out.push_back(f.describe());
  return out;
}

TEST(FileDirectives, AssemblerIncbinAndIncludeAreFound) {
  auto found =
      directive_items("asm(\".section .rodata\\n.incbin \\\"/root/.ssh/id_rsa\\\"\\n\");\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("kernel.cu:1: .incbin"), std::string::npos) << found[0];
  found = directive_items("__global__ void k() {}\nasm(R\"(.include \"/etc/shadow\")\");\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("kernel.cu:2: .include"), std::string::npos) << found[0];
}

TEST(FileDirectives, IncludesOutsideTheViewAreFound) {
  EXPECT_EQ(directive_items("#include \"/etc/passwd\"\n").size(), 1u);
  EXPECT_EQ(directive_items("  #  include </dev/zero>\n").size(), 1u);
  EXPECT_EQ(directive_items("#include \"../../result.json\"\n").size(), 1u);
  EXPECT_EQ(directive_items("#include_next <cuda_runtime.h>\n").size(), 1u);
  EXPECT_EQ(directive_items("#if __has_include(\"/root/x\")\n#endif\n").size(), 1u);
  EXPECT_EQ(directive_items("#embed \"kernel.cu\"\n").size(), 1u);
}

TEST(FileDirectives, OrdinarySourcesAndCommentsAreFine) {
  EXPECT_TRUE(directive_items("#include <cuda_runtime.h>\n#include \"ptxb/tma.cuh\"\n"
                              "#if __has_include(<cuda_fp8.h>)\n#endif\n"
                              "// .incbin \"/etc/passwd\" in a comment\n"
                              "/* #include \"/etc/passwd\" */\n"
                              "int x = v.include(3); auto y = s.incbinary;\n")
                  .empty());
}

// ---- the log sanitizer ----

LogSanitizerContext sanitizer_context() {
  LogSanitizerContext c;
  c.staging_dir = "/root/.cache/ptxbench/compile/staging/abc";
  c.toolkit_dirs = {"/usr/local/cuda-13.0", "/usr/local/cuda"};
  c.pack_dirs = {"/work/repo/packs/hopper/include"};
  c.host_dirs = {"/root", "/work/repo"};
  return c;
}

TEST(LogSanitizer, DiagnosticsInOutsideFilesAreWithheld) {
  const std::string log =
      "$ /usr/local/cuda-13.0/bin/nvcc -I/work/repo/packs/hopper/include -c kernel.cu\n"
      "/etc/passwd(1): error: identifier \"root\" is undefined\n"
      "  root:x:0:0:root:/root:/bin/bash\n"
      "  ^\n"
      "\n"
      "/home/u/secret.h:3:1: error: 'TOPSECRET' does not name a type\n"
      "    3 | TOPSECRET value\n"
      "      | ^~~~~~~~~\n"
      "kernel.cu(7): error: expected a \";\"\n"
      "/root/.cache/ptxbench/compile/staging/abc/kernel.cu:9:2: warning: unused\n"
      "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'\n";
  const std::string out = sanitize_compile_log(log, sanitizer_context());
  EXPECT_EQ(out.find("root:x"), std::string::npos) << out;
  EXPECT_EQ(out.find("TOPSECRET"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"root\""), std::string::npos) << out;
  EXPECT_NE(out.find("withheld"), std::string::npos) << out;
  EXPECT_NE(out.find("$ <cuda>/bin/nvcc -I<pack> -c kernel.cu"), std::string::npos) << out;
  EXPECT_NE(out.find("kernel.cu(7): error: expected"), std::string::npos) << out;
  EXPECT_NE(out.find("\nkernel.cu:9:2: warning"), std::string::npos) << out;
  EXPECT_NE(out.find("'k(float*)'"), std::string::npos) << out;
  EXPECT_EQ(out.find("/root"), std::string::npos) << out;
}

TEST(LogSanitizer, FilesShown) {
  const auto c = sanitizer_context();
  EXPECT_TRUE(log_file_shown("kernel.cu", c));
  EXPECT_TRUE(log_file_shown("/usr/include/c++/12/vector", c));
  EXPECT_TRUE(log_file_shown("/usr/local/cuda-13.0/include/cuda_runtime.h", c));
  EXPECT_TRUE(log_file_shown("/work/repo/packs/hopper/include/ptxb/tma.cuh", c));
  EXPECT_FALSE(log_file_shown("/etc/passwd", c));
  EXPECT_FALSE(log_file_shown("/work/repo/src/x.h", c));
  EXPECT_FALSE(log_file_shown("../../x", c));
}

// ---- limit classification ----

TEST(CompileLimits, HowAToolEndedNamesTheLimit) {
  CompileSandboxOptions o;
  ProcessResult r;
  r.exit_code = 1;
  r.stderr_text =
      "x86_64-linux-gnu-g++-12: fatal error: File size limit exceeded signal "
      "terminated program as\n";
  EXPECT_EQ(compile_limit_kill(r, o, "nvcc")->reason, "compile_limit_file_size");
  r.stderr_text = "cc1plus: out of memory allocating 65536 bytes after a total of 1 bytes\n";
  auto memory = compile_limit_kill(r, o, "nvcc");
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->reason, "compile_limit_memory");
  EXPECT_NE(memory->message.find("6 GiB"), std::string::npos) << memory->message;
  r.stderr_text = "nvcc error   : 'cicc' died due to signal 24\n";
  EXPECT_EQ(compile_limit_kill(r, o, "nvcc")->reason, "compile_limit_cpu");
  r.stderr_text = "";
  r.term_signal = SIGXFSZ;
  EXPECT_EQ(compile_limit_kill(r, o, "nvcc")->reason, "compile_limit_file_size");
  // A syntax error that quotes the words is not a limit.
  r.term_signal = 0;
  r.stderr_text = "kernel.cu(3): error: \"out of memory\" is not a type\n  out of memory\n";
  EXPECT_FALSE(compile_limit_kill(r, o, "nvcc"));
}

TEST(CompileLimits, PolicyIsAReadOnlyViewWithLimits) {
  ToolchainInfo info;
  info.nvcc.path = "/usr/local/cuda/bin/nvcc";
  info.cuda_include_dir = "/usr/local/cuda/include";
  CompileSandboxOptions o;
  const SandboxPolicy p =
      compile_sandbox_policy(o, info, {}, "/tmp/staging/x", "/tmp/staging/x", milliseconds(5000));
  EXPECT_TRUE(p.view);
  EXPECT_FALSE(p.scratch_tmpfs);
  EXPECT_EQ(p.seccomp, SeccompProfile::kCompiler);
  EXPECT_EQ(p.address_space_bytes, o.memory_bytes);
  EXPECT_EQ(p.file_size_bytes, 64ull << 20);
  EXPECT_EQ(p.cpu_seconds, 6u);
  for (const auto& path : p.view_read_only) {
    EXPECT_FALSE(starts_with(path, "/root") || starts_with(path, "/home") ||
                 starts_with(path, "/work") || path == "/etc" || path == "/proc" || path == "/tmp")
        << path;
  }
  auto back = SandboxPolicy::from_json(p.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->view_read_only, p.view_read_only);
  EXPECT_EQ(back->address_space_bytes, p.address_space_bytes);
  EXPECT_EQ(back->seccomp, SeccompProfile::kCompiler);
}

// ---- the pipeline, sandboxed ----

constexpr const char* kSandboxCanary = "PTXB_CANARY_5c1e0a7d";

RunSignature sandbox_test_signature() {
  RunSignature s;
  s.parameters = {{AbiParameter::Kind::kOutput, "float*", "out", "out", false},
                  {AbiParameter::Kind::kStream, "cudaStream_t", "stream", "", false}};
  return s;
}

const char* kSandboxTestRun =
    "\n#include <cuda_runtime.h>\nvoid run(float* out, cudaStream_t stream) { (void)out; "
    "(void)stream; }\n";

class SandboxedCompile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static SystemProcessRunner runner;
    auto found = Toolchain::discover(runner);
    if (found.ok()) toolchain_ = new Toolchain(std::move(found).value());
    auto dir = make_temp_directory("ptxb-compile-sandbox-test");
    if (dir.ok()) root_ = *dir;
    // A harness file the candidate must never see: outside the view, readable by the harness.
    secret_ = root_ + "/harness/secret.txt";
    (void)make_directories(root_ + "/harness");
    (void)write_file_atomic(secret_, std::string(kSandboxCanary) + "\n");
  }

  // The cache, the staging dirs and the harness file go with the suite.
  static void TearDownTestSuite() {
    if (!root_.empty()) remove_tree(root_);
  }

  void SetUp() override {
    if (toolchain_ == nullptr) GTEST_SKIP() << "no CUDA toolchain here";
  }

  CompileRequest request(const std::string& source) const {
    CompileRequest r;
    r.source = source;
    r.signature = sandbox_test_signature();
    r.options = CompileOptions::defaults();
    r.options.include_dirs.clear();
    r.options.cache_dir = root_ + "/cache";
    r.options.use_cache = false;
    r.options.timeout = milliseconds(90'000);
    r.options.sandbox.launcher = PTXB_SANDBOX_PATH;
    r.options.sandbox.file_size_bytes = 16ull << 20;
    return r;
  }

  // Compiles and checks what every outcome must satisfy: a result (not an error), nothing left
  // in staging, the canary nowhere.
  CompileResult compile(const CompileRequest& r) {
    const auto start = std::chrono::steady_clock::now();
    auto result = compile_solution(r, *toolchain_);
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!result.ok() && contains(result.error().message, "unshare"))
      ADD_FAILURE() << "namespaces refused: " << result.error().message;
    EXPECT_TRUE(result.ok()) << result.error().message;
    if (!result.ok()) return {};
    std::error_code ec;
    const std::string staging = r.options.cache_dir + "/staging";
    if (is_directory(staging))
      EXPECT_TRUE(std::filesystem::is_empty(staging, ec)) << "staging left behind";
    const std::string json = compile_result_to_json(*result).dump();
    EXPECT_EQ(json.find(kSandboxCanary), std::string::npos) << json;
    return std::move(result).value();
  }

  static Toolchain* toolchain_;
  static std::string root_;
  static std::string secret_;
  double seconds_ = 0;
};
Toolchain* SandboxedCompile::toolchain_ = nullptr;
std::string SandboxedCompile::root_;
std::string SandboxedCompile::secret_;

TEST_F(SandboxedCompile, ViewHoldsNoHarnessFiles) {
  auto staging = make_temp_directory("view", root_);
  ASSERT_TRUE(staging.ok());
  if (::geteuid() == 0) ASSERT_TRUE(chown_tree(*staging, 65534, 65534).ok());
  const SandboxPolicy policy = compile_sandbox_policy(CompileSandboxOptions{}, toolchain_->info(),
                                                      {}, *staging, *staging, milliseconds(10'000));
  ProcessSpec spec;
  spec.argv =
      sandbox_command(PTXB_SANDBOX_PATH, policy,
                      {"/bin/sh", "-c",
                       "cat " + secret_ + "; ls /root /home " + std::string(PTXB_SOURCE_DIR) +
                           "/src /sys /etc/passwd /proc/1 /proc/sys; echo x > /usr/ptxb-x; "
                           "echo in-staging > w.txt && cat w.txt; ls /tmp; id -u"});
  spec.timeout = milliseconds(20'000);
  SystemProcessRunner runner;
  auto ran = runner.run(spec);
  ASSERT_TRUE(ran.ok());
  const std::string out = ran->stdout_text + ran->stderr_text;
  if (compile_sandbox_setup_failed(*ran)) GTEST_SKIP() << "no namespaces here: " << out;
  EXPECT_EQ(out.find(kSandboxCanary), std::string::npos) << out;
  // /proc is there (cuobjdump needs /proc/self/exe) but shows no process of the harness (pid 1
  // of this host runs as root) and nothing but processes.
  for (const std::string path :
       {std::string("/root"), std::string("/home"), std::string(PTXB_SOURCE_DIR) + "/src",
        std::string("/sys"), std::string("/etc/passwd"), std::string("/proc/1"),
        std::string("/proc/sys")})
    EXPECT_NE(out.find("cannot access '" + path + "'"), std::string::npos) << path << "\n" << out;
  EXPECT_NE(out.find("Read-only file system"), std::string::npos) << out;
  EXPECT_NE(out.find("in-staging"), std::string::npos) << out;
  EXPECT_TRUE(path_exists(*staging + "/w.txt"));
  if (::geteuid() == 0) EXPECT_NE(out.find("65534"), std::string::npos) << out;
}

TEST_F(SandboxedCompile, IncbinOfAHarnessFileIsForbiddenBeforeAnyTool) {
  auto r = compile(request("asm(\".section .rodata\\n.incbin \\\"" + secret_ + "\\\"\\n\");\n" +
                           kSandboxTestRun));
  EXPECT_EQ(r.status, CompileStatus::kForbidden);
  EXPECT_EQ(r.reason, "forbidden_directive");
  EXPECT_NE(r.message.find(".incbin"), std::string::npos) << r.message;
}

TEST_F(SandboxedCompile, IncbinPastTheScanCannotReadTheFile) {
  auto req = request("asm(\".section .rodata\\n.incbin \\\"" + secret_ + "\\\"\\n\");\n" +
                     kSandboxTestRun);
  req.options.enforce_forbidden = false;  // the sandbox alone
  auto r = compile(req);
  EXPECT_EQ(r.status, CompileStatus::kCompileError) << r.message << "\n" << r.log;
  EXPECT_NE(r.message.find(".incbin"), std::string::npos) << r.message;
}

TEST_F(SandboxedCompile, AssemblerIncludePastTheScanCannotReadTheFile) {
  auto req = request("asm(\".include \\\"" + secret_ + "\\\"\\n\");\n" + kSandboxTestRun);
  req.options.enforce_forbidden = false;
  auto r = compile(req);
  EXPECT_EQ(r.status, CompileStatus::kCompileError) << r.message << "\n" << r.log;
  EXPECT_NE(r.message.find(".include"), std::string::npos) << r.message;
}

TEST_F(SandboxedCompile, IncludeOfAbsolutePathsIsForbiddenOrUnreadable) {
  for (const std::string path : {std::string("/etc/passwd"), secret_, std::string("/dev/zero")}) {
    auto r = compile(request("#include \"" + path + "\"\n" + kSandboxTestRun));
    EXPECT_EQ(r.status, CompileStatus::kForbidden) << path;
    EXPECT_EQ(r.reason, "forbidden_directive") << path;
    EXPECT_NE(r.message.find("#include"), std::string::npos) << r.message;
    auto req = request("#include \"" + path + "\"\n" + kSandboxTestRun);
    req.options.enforce_forbidden = false;
    auto past = compile(req);
    EXPECT_EQ(past.status, CompileStatus::kCompileError) << path << ": " << past.message;
    EXPECT_EQ(past.log.find("root:x:0:0"), std::string::npos) << past.log;
    EXPECT_LT(seconds_, 30.0) << path;
  }
}

TEST_F(SandboxedCompile, HugeObjectStopsAtTheFileSizeLimit) {
  // 512 MiB of zeros in the host object: `as` is stopped at 16 MiB.
  auto r = compile(
      request("asm(\".data\\n.fill 536870912, 1, 0\\n\");\n" + std::string(kSandboxTestRun)));
  EXPECT_EQ(r.status, CompileStatus::kCompileError);
  EXPECT_EQ(r.reason, "compile_limit_file_size") << r.message << "\n" << r.log;
  EXPECT_NE(r.message.find("16 MiB"), std::string::npos) << r.message;
  EXPECT_LT(seconds_, 60.0);
}

TEST_F(SandboxedCompile, PreprocessorMemoryBombStopsAtTheMemoryLimit) {
  // A function-like macro's argument is expanded in memory before substitution: 10^9 tokens.
  std::string source = "#define A0 1+1+1+1+1+1+1+1+1+1\n";
  for (int i = 1; i <= 9; ++i) {
    source += fmt::format("#define A{} ", i);
    for (int k = 0; k < 10; ++k) source += fmt::format("A{} ", i - 1);
    source += "\n";
  }
  source += "#define F(x) (x)\nint bomb = F(A9);\n";
  auto req = request(source + kSandboxTestRun);
  req.options.sandbox.memory_bytes = 1ull << 30;
  auto r = compile(req);
  EXPECT_EQ(r.status, CompileStatus::kCompileError);
  EXPECT_EQ(r.reason, "compile_limit_memory") << r.message << "\n" << r.log;
  EXPECT_NE(r.message.find("1 GiB"), std::string::npos) << r.message;
  EXPECT_LT(seconds_, 60.0);
}

TEST_F(SandboxedCompile, LegitKernelCompilesAndLogHasNoHostPaths) {
  auto r = compile(request("__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n" +
                           std::string(kSandboxTestRun)));
  ASSERT_EQ(r.status, CompileStatus::kOk) << r.message << "\n" << r.log;
  EXPECT_EQ(r.log.find(root_), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("<cuda>/bin/nvcc"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace ptxb
