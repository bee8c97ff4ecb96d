// The sandbox for real: ptxbench-sandbox runs tests/sandbox/sandbox_probe.cc, which tries what a
// hostile candidate would, and each test checks which mechanism stopped it (docs/integrity.md).
// Namespaces are a kernel feature a container may refuse; then every test here is skipped with
// the launcher's own message (never silently passed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/process.h"
#include "core/strings.h"
#include "sandbox/blocked_syscall.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace ptxb {
namespace {

// The binaries as built, or next to this test binary when it was carried elsewhere with them
// in one folder.
std::string beside_test(const char* built) {
  if (path_exists(built)) return built;
  const std::string self = canonical_path("/proc/self/exe");
  const std::string name = std::string(built).substr(std::string(built).rfind('/') + 1);
  return self.substr(0, self.rfind('/')) + "/" + name;
}
const std::string kLauncher = beside_test(PTXB_SANDBOX_PATH);
const std::string kProbe = beside_test(PTXB_SANDBOX_PROBE_PATH);

bool refused_by_kernel(const std::string& launcher_error) {
  return contains(launcher_error, "unshare") ||
         (contains(launcher_error, "mount") &&
          (contains(launcher_error, "Operation not permitted") ||
           contains(launcher_error, "Function not implemented")));
}

class SandboxExec : public ::testing::Test {
 protected:
  void SetUp() override {
    // Staged where the evaluator stages (/var/tmp): /tmp gets a private tmpfs inside.
    auto dir = make_temp_directory("ptxb-sandbox-test", "/var/tmp");
    ASSERT_TRUE(dir.ok());
    staging_ = *dir;
    ::chmod(staging_.c_str(), 0755);  // the sandbox's uid must reach its scratch directory
    policy_.scratch_dir = staging_ + "/scratch";
    ASSERT_TRUE(make_directories(policy_.scratch_dir).ok());
    ::chmod(policy_.scratch_dir.c_str(), 0755);
    // Skip only when the kernel (or a container's own seccomp profile) refuses the namespace
    // and mount calls here, with the launcher's reason; any other set-up failure fails.
    ProcessResult probe = sandboxed({"report"});
    if (probe.exit_code == kSandboxExitSetupFailed && refused_by_kernel(probe.stderr_text))
      GTEST_SKIP() << "the kernel refuses namespaces here: " << trim(probe.stderr_text);
    ASSERT_EQ(probe.exit_code, 0) << probe.describe() << ": " << probe.stderr_text;
  }
  void TearDown() override { remove_tree(staging_); }

  // Runs the probe with `args` inside the sandbox; `env` is the launcher's environment.
  ProcessResult sandboxed(const std::vector<std::string>& args,
                          std::optional<std::vector<std::string>> env = std::nullopt) {
    std::vector<std::string> program = {kProbe};
    program.insert(program.end(), args.begin(), args.end());
    ProcessSpec spec;
    spec.argv = sandbox_command(kLauncher, policy_, program);
    spec.env = env;
    spec.timeout = std::chrono::seconds(60);
    auto ran = SystemProcessRunner().run(spec);
    EXPECT_TRUE(ran.ok()) << (ran.ok() ? "" : ran.error().message);
    return ran.ok() ? *ran : ProcessResult{};
  }

  std::string staging_;
  SandboxPolicy policy_;
};

TEST_F(SandboxExec, UnprivilegedUidNoCapabilitiesNewNamespacesFilterOn) {
  ProcessResult r = sandboxed({"report"});
  auto report = parse_json(r.stdout_text, "probe report");
  ASSERT_TRUE(report.ok()) << r.stdout_text;
  const std::string uid = ::geteuid() == 0 ? "65534" : std::to_string(::geteuid());
  EXPECT_EQ((*report)["Uid"], uid + "\t" + uid + "\t" + uid + "\t" + uid);
  EXPECT_EQ((*report)["CapEff"], "0000000000000000");
  EXPECT_EQ((*report)["CapBnd"], "0000000000000000");
  EXPECT_EQ((*report)["network_interfaces"], Json::array({"lo"}));
  const Status checked = check_sandbox_report(*report, namespace_ids(), true, true);
  EXPECT_TRUE(checked.ok()) << checked.error().message;
}

TEST_F(SandboxExec, NoNetworkSocket) {
  // Only AF_UNIX (the runner's channel, the CUDA driver's local sockets).
  EXPECT_EQ(sandboxed({"socket", "1"}).stdout_text, "ok\n");
  for (const char* family : {"2", "10", "16", "17"}) {  // INET, INET6, NETLINK, PACKET
    ProcessResult r = sandboxed({"socket", family});
    EXPECT_EQ(r.term_signal, SIGSYS) << family << ": " << r.describe();
    EXPECT_EQ(r.stdout_text, "") << family;
  }
}

TEST_F(SandboxExec, ProfilerProfileHasLoopbackIpButNoRawSockets) {
  policy_.seccomp = SeccompProfile::kProfiler;
  EXPECT_EQ(sandboxed({"socket", "2"}).stdout_text, "ok\n");
  EXPECT_EQ(sandboxed({"socket", "17"}).term_signal, SIGSYS);
  // And the namespace around it has no interface but lo.
  auto report = parse_json(sandboxed({"report"}).stdout_text, "report");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ((*report)["network_interfaces"], Json::array({"lo"}));
}

TEST_F(SandboxExec, WritesOnlyInsideScratchWhichNeverReachesTheHost) {
  EXPECT_EQ(sandboxed({"write", staging_ + "/outside"}).stdout_text, "errno 30\n");  // EROFS
  EXPECT_EQ(sandboxed({"write", "/var/tmp/ptxb-sandbox-escape"}).stdout_text, "errno 30\n");
  EXPECT_EQ(sandboxed({"write", policy_.scratch_dir + "/inside"}).stdout_text, "ok\n");
  EXPECT_FALSE(path_exists(staging_ + "/outside"));
  // The scratch and /tmp are private tmpfs: what the sandbox wrote there is gone with it.
  EXPECT_FALSE(path_exists(policy_.scratch_dir + "/inside"));
  // /tmp is a private tmpfs too, unless the program itself lives under the host's /tmp (a build
  // there): then it stays the host's, read-only. Either way nothing lands in the host's /tmp.
  const std::string in_tmp = "/tmp/ptxb-sandbox-private-" + std::to_string(::getpid());
  const bool private_tmp = !starts_with(canonical_path(kProbe), "/tmp/");
  EXPECT_EQ(sandboxed({"write", in_tmp}).stdout_text, private_tmp ? "ok\n" : "errno 30\n");
  EXPECT_FALSE(path_exists(in_tmp));
}

TEST_F(SandboxExec, AScratchOnDiskIsTheOnlyWritablePlaceAndOutlivesTheSandbox) {
  policy_.scratch_tmpfs = false;  // the debug stage's core-dump run (supervisor/core_dump.h)
  // As root the sandbox's uid is nobody's: the folder is handed over, as EvalSandbox does.
  if (::geteuid() == 0)
    ASSERT_EQ(::chown(policy_.scratch_dir.c_str(), policy_.uid, policy_.gid), 0);
  EXPECT_EQ(sandboxed({"write", staging_ + "/outside"}).stdout_text, "errno 30\n");  // EROFS
  EXPECT_EQ(sandboxed({"write", policy_.scratch_dir + "/inside"}).stdout_text, "ok\n");
  EXPECT_TRUE(path_exists(policy_.scratch_dir + "/inside"));
  EXPECT_FALSE(path_exists(staging_ + "/outside"));
}

TEST_F(SandboxExec, NoSecretsInTheEnvironment) {
  std::vector<std::string> env = current_environment();
  for (const char* secret : {"OPENAI_API_KEY=sk-test", "HF_TOKEN=hf_x", "AWS_SECRET_ACCESS_KEY=s",
                             "CUDA_LAUNCH_TOKEN=t", "RANDOM_VARIABLE=1"})
    env.push_back(secret);
  ProcessResult r = sandboxed({"env"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  for (const char* name : {"OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET", "CUDA_LAUNCH_TOKEN",
                           "RANDOM_VARIABLE", "sk-test"})
    EXPECT_EQ(r.stdout_text.find(name), std::string::npos) << name << " leaked:\n" << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("HOME=" + policy_.scratch_dir + "\n"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("TMPDIR=" + policy_.scratch_dir + "\n"), std::string::npos);
}

TEST_F(SandboxExec, OnlyTheChannelDescriptorIsInherited) {
  // Two descriptors the launcher inherits without O_CLOEXEC: one stands for the runner's
  // channel (kept), the other for anything else the supervisor had open (closed).
  const int channel = ::open("/dev/null", O_RDONLY);
  const int stray = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(channel, 3);
  ASSERT_GE(stray, 3);
  policy_.keep_fds = {0, 1, 2, channel};
  ProcessResult r = sandboxed({"fds"});
  ::close(channel);
  ::close(stray);
  EXPECT_EQ(r.stdout_text, fmt::format("0\n1\n2\n{}\n", channel)) << r.stderr_text;
}

TEST_F(SandboxExec, CpuTimeLimitEndsASpinner) {
  policy_.cpu_seconds = 1;
  ProcessResult r = sandboxed({"spin"});
  EXPECT_TRUE(r.term_signal == SIGXCPU || r.term_signal == SIGKILL) << r.describe();
  EXPECT_FALSE(r.timed_out);
}

TEST_F(SandboxExec, ProcessLimitStopsAForkBomb) {
  policy_.max_processes = 16;
  ProcessResult r = sandboxed({"forkbomb", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.describe() << r.stderr_text;
  ASSERT_TRUE(starts_with(r.stdout_text, "forked ")) << r.stdout_text;
  EXPECT_LT(std::stoi(r.stdout_text.substr(7)), 16) << r.stdout_text;
}

TEST_F(SandboxExec, FileSizeLimitEndsABigWrite) {
  policy_.file_size_bytes = 1 << 20;
  EXPECT_EQ(sandboxed({"bigfile", std::to_string(4 << 20)}).term_signal, SIGXFSZ);
}

TEST_F(SandboxExec, CannotTraceOrSignalTheParent) {
  const std::string parent = std::to_string(::getpid());
  EXPECT_EQ(sandboxed({"ptrace", parent}).term_signal, SIGSYS);
  EXPECT_EQ(sandboxed({"kill", parent}).term_signal, SIGSYS);
  // The runner's handler names the call in its log before dying of the same signal.
  ProcessResult named = sandboxed({"reporter", "ptrace", parent});
  EXPECT_EQ(named.term_signal, SIGSYS);
  EXPECT_EQ(sandbox_seccomp_reason(named.stderr_text), "sandbox_seccomp:ptrace")
      << named.stderr_text;
}

TEST_F(SandboxExec, HiddenLibrariesReadAsEmpty) {
  const std::string library = staging_ + "/libcublasLt.so.13";
  ASSERT_TRUE(write_file_atomic(library,
                                "\x7f"
                                "ELF and the rest")
                  .ok());
  EXPECT_EQ(sandboxed({"open", library}).stdout_text, "ok 4\n");
  policy_.hidden_files = {library};
  EXPECT_EQ(sandboxed({"open", library}).stdout_text, "ok 0\n");
}

TEST_F(SandboxExec, SetupFailureIsOneLineAndNothingRuns) {
  policy_.scratch_dir = staging_ + "/missing";
  ProcessResult r = sandboxed({"write", staging_ + "/ran"});
  EXPECT_EQ(r.exit_code, kSandboxExitSetupFailed);
  EXPECT_TRUE(starts_with(r.stderr_text, kSandboxSetupErrorPrefix)) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("does not exist"), std::string::npos);
  EXPECT_EQ(r.stdout_text, "");
}

// The launcher started by an ordinary user: a user namespace instead of the uid change.
TEST_F(SandboxExec, WithoutRootAUserNamespaceDoesTheSame) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: every other test here already ran this path";
  const auto setpriv = find_executable("setpriv");
  if (!setpriv) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  std::vector<std::string> argv = {*setpriv,
                                   "--reuid",
                                   "4242",
                                   "--regid",
                                   "4242",
                                   "--clear-groups",
                                   "--inh-caps=-all",
                                   "--bounding-set=-all"};
  const auto wrapped = sandbox_command(kLauncher, policy_, {kProbe, "report"});
  argv.insert(argv.end(), wrapped.begin(), wrapped.end());
  ProcessSpec spec;
  spec.argv = argv;
  spec.timeout = std::chrono::seconds(60);
  auto ran = SystemProcessRunner().run(spec);
  ASSERT_TRUE(ran.ok());
  if (ran->exit_code == kSandboxExitSetupFailed && refused_by_kernel(ran->stderr_text))
    GTEST_SKIP() << "unprivileged user namespaces are refused here: " << trim(ran->stderr_text);
  auto report = parse_json(ran->stdout_text, "report");
  ASSERT_TRUE(report.ok()) << ran->describe() << ": " << ran->stderr_text;
  EXPECT_EQ((*report)["Uid"], "4242\t4242\t4242\t4242");
  EXPECT_NE((*report)["namespaces"]["user"], namespace_ids()["user"]);
  const Status checked = check_sandbox_report(*report, namespace_ids(), true, true);
  EXPECT_TRUE(checked.ok()) << checked.error().message;
}

}  // namespace
}  // namespace ptxb
