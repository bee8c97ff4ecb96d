// The sandbox's plain-data parts: the policy and its JSON, the environment filter, the hidden
// library list, the seccomp rule table, the blocked-call line and the self-check's verdict.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "core/fs.h"
#include "sandbox/blocked_syscall.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"
#include "sandbox/seccomp_filter.h"

namespace ptxb {
namespace {

TEST(SandboxPolicy, RoundTripsThroughJson) {
  SandboxPolicy p;
  p.scratch_dir = "/tmp/x/scratch-0";
  p.seccomp = SeccompProfile::kProfiler;
  p.keep_fds = {0, 1, 2, 3};
  p.hidden_files = {"/usr/lib/libcublas.so.13"};
  p.set_env = {"PTXBENCH_REFERENCE=cublaslt_gemm"};
  p.cpu_seconds = 7;
  auto back = SandboxPolicy::from_json(Json::parse(p.to_json().dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), p.to_json());
  EXPECT_EQ(back->seccomp, SeccompProfile::kProfiler);
}

TEST(SandboxPolicy, RejectsWhatTheLauncherCouldNotApplySafely) {
  auto bad = [](const char* key, Json value) {
    Json j = SandboxPolicy{.scratch_dir = "/tmp/s"}.to_json();
    j[key] = std::move(value);
    return SandboxPolicy::from_json(j);
  };
  EXPECT_TRUE(bad("cpu_seconds", 5).ok());
  EXPECT_FALSE(bad("scratch_dir", "relative/dir").ok());
  EXPECT_FALSE(bad("seccomp", "none").ok());
  EXPECT_FALSE(bad("set_env", Json::array({"NOEQUALS"})).ok());
  EXPECT_FALSE(bad("hidden_files", Json::array({"lib.so"})).ok());
  EXPECT_FALSE(bad("keep_fds", Json::array({-1})).ok());
  EXPECT_FALSE(bad("pinned_fd", 7).ok());  // not a kept descriptor
  EXPECT_TRUE(bad("pinned_fd", 2).ok());
  EXPECT_FALSE(bad("max_processes", 0).ok());
  EXPECT_FALSE(bad("uid", "nobody").ok());
  EXPECT_FALSE(SandboxPolicy::from_json(Json::array()).ok());
}

TEST(SandboxPolicy, EnvironmentIsAnAllowListWithoutCredentials) {
  SandboxPolicy p;
  p.scratch_dir = "/s";
  p.set_env = {"PTXBENCH_REFERENCE=cudnn_sdpa_fwd", "LANG=C"};
  const std::vector<std::string> env = sandbox_environment(
      p, {"PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/local/cuda/lib64", "CUDA_VISIBLE_DEVICES=0",
          "HOME=/root", "TMPDIR=/var/tmp", "LANG=en_US.UTF-8", "OPENAI_API_KEY=sk-1",
          "GITHUB_TOKEN=ghp", "AWS_SECRET_ACCESS_KEY=x", "DB_PASSWORD=p", "CUDA_AUTH_TOKEN=t",
          "SSH_AUTH_SOCK=/tmp/agent", "PTXBENCH_REFERENCE=stale", "DISPLAY=:0", "MALFORMED"});
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/local/cuda/lib64",
                                           "CUDA_VISIBLE_DEVICES=0", "HOME=/s", "TMPDIR=/s",
                                           "CUDA_CACHE_PATH=/s",
                                           "PTXBENCH_REFERENCE=cudnn_sdpa_fwd", "LANG=C"}));
  for (const char* name : {"api_key", "X_TOKEN_Y", "Secret", "PASSWD", "MY_CREDENTIALS", "COOKIE"})
    EXPECT_TRUE(looks_like_credential(name)) << name;
  for (const char* name : {"PATH", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "LANG"})
    EXPECT_FALSE(looks_like_credential(name)) << name;
}

TEST(SandboxPolicy, CommandIsLauncherPolicyAndProgram) {
  SandboxPolicy p;
  p.scratch_dir = "/s";
  auto argv = sandbox_command("/b/ptxbench-sandbox", p, {"/usr/bin/ncu", "--csv"});
  ASSERT_EQ(argv.size(), 6u);
  EXPECT_EQ(argv[0], "/b/ptxbench-sandbox");
  EXPECT_EQ(argv[1], "--policy-json");
  EXPECT_EQ(Json::parse(argv[2]), p.to_json());
  EXPECT_EQ(argv[3], "--");
  EXPECT_EQ(argv[4], "/usr/bin/ncu");
}

TEST(SandboxPolicy, ForbiddenLibrariesAreFoundThroughTheirLinks) {
  auto dir = make_temp_directory("ptxb-libs");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(write_file_atomic(*dir + "/libcublasLt.so.13.1.0", "elf").ok());
  ASSERT_TRUE(write_file_atomic(*dir + "/libcudart.so.13", "elf").ok());
  ASSERT_TRUE(write_file_atomic(*dir + "/libcudnn_graph.so.9", "elf").ok());
  ASSERT_EQ(::symlink("libcublasLt.so.13.1.0", (*dir + "/libcublasLt.so").c_str()), 0);
  const std::string real = canonical_path(*dir);
  EXPECT_EQ(
      forbidden_library_files({*dir, "/nonexistent", "relative"}),
      (std::vector<std::string>{real + "/libcublasLt.so.13.1.0", real + "/libcudnn_graph.so.9"}));
  remove_tree(*dir);
}

TEST(SeccompRules, BlockWhatReachesAcrossTheSandbox) {
  auto find = [](const std::vector<SeccompRule>& rules, const std::string& call) {
    for (const auto& r : rules)
      if (r.syscall == call) return r;
    return SeccompRule{};
  };
  const auto runner = seccomp_rules(SeccompProfile::kRunner);
  for (const char* call : {"ptrace", "process_vm_readv", "process_vm_writev", "mount", "unshare",
                           "setns", "bpf", "keyctl", "io_uring_setup", "userfaultfd"})
    EXPECT_EQ(find(runner, call).verdict, "trap") << call;
  EXPECT_EQ(find(runner, "socket").condition, "domain != AF_UNIX");
  EXPECT_EQ(find(runner, "kill").condition, "pid != self");
  EXPECT_EQ(find(runner, "perf_event_open").verdict, "errno EACCES");
  EXPECT_EQ(find(runner, "clone3").verdict, "errno ENOSYS");
  const auto profiler = seccomp_rules(SeccompProfile::kProfiler);
  EXPECT_EQ(find(profiler, "kill").syscall, "");  // ncu and its target signal each other
  EXPECT_NE(find(profiler, "socket").condition.find("AF_INET"), std::string::npos);
  // Both filters build with this libseccomp (every named call is known, every rule accepted).
  EXPECT_TRUE(SeccompFilter::build(SeccompProfile::kRunner, ::getpid()).ok());
  EXPECT_TRUE(SeccompFilter::build(SeccompProfile::kProfiler, ::getpid()).ok());
}

// Runs `act` in a child under the runner filter with fd `pinned` pinned; the child's end: 0
// when `act` returned, SIGSYS when the filter trapped a call.
int run_pinned(int pinned, const std::function<void()>& act) {
  const pid_t child = ::fork();
  if (child == 0) {
    auto filter = SeccompFilter::build(SeccompProfile::kRunner, ::getpid(), pinned);
    if (!filter.ok() || !filter->load().ok()) ::_exit(90);
    act();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  return WEXITSTATUS(status) == 0 ? 0 : -WEXITSTATUS(status);
}

TEST(SeccompRules, ThePinnedChannelCannotBeReplacedOrClosed) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const int pinned = pipe_fds[0], other = pipe_fds[1];
  const int spare = ::dup(other);
  ASSERT_GE(spare, 0);
  EXPECT_EQ(run_pinned(pinned, [&] { ::dup2(other, pinned); }), SIGSYS);
  EXPECT_EQ(run_pinned(pinned, [&] { ::syscall(SYS_dup3, other, pinned, 0); }), SIGSYS);
  EXPECT_EQ(run_pinned(pinned, [&] { ::close(pinned); }), SIGSYS);
  // The kernel reads ints: high bits on the descriptor do not get it past the rule.
  EXPECT_EQ(run_pinned(pinned, [&] { ::syscall(SYS_close, (1ll << 32) | pinned); }), SIGSYS);
  EXPECT_EQ(run_pinned(pinned, [&] { ::syscall(SYS_close_range, 0u, ~0u, 0u); }), SIGSYS);
  EXPECT_EQ(run_pinned(pinned, [&] { ::syscall(SYS_close_range, 1ll << 32, ~0u, 0u); }), SIGSYS);
  // Everything around it stays allowed: other descriptors, ranges above it, dup onto others.
  EXPECT_EQ(run_pinned(pinned, [&] { ::dup2(other, spare); }), 0);
  EXPECT_EQ(run_pinned(pinned, [&] { ::close(spare); }), 0);
  EXPECT_EQ(run_pinned(pinned, [&] { ::syscall(SYS_close_range, pinned + 1, ~0u, 0u); }), 0);
  EXPECT_EQ(run_pinned(pinned, [&] { ::dup(pinned); }), 0);
  ::close(spare);
  ::close(other);
  ::close(pinned);
  const auto rules = seccomp_rules(SeccompProfile::kRunner, 3);
  int pinned_rules = 0;
  for (const auto& r : rules) pinned_rules += r.condition.find('3') != std::string::npos;
  EXPECT_EQ(pinned_rules, 4);
}

TEST(BlockedSyscall, TheLastLineNamesTheCall) {
  EXPECT_EQ(syscall_name(101), "ptrace");
  EXPECT_EQ(syscall_name(41), "socket");
  EXPECT_EQ(syscall_name(99999), "syscall 99999");
  const std::string log =
      "hello\nptxbench-sandbox: blocked system call 41\nmore\n"
      "ptxbench-sandbox: blocked system call 101\n";
  EXPECT_EQ(blocked_syscall_in_log(log), 101);
  EXPECT_EQ(sandbox_seccomp_reason(log), "sandbox_seccomp:ptrace");
  EXPECT_EQ(blocked_syscall_in_log("ptxbench-sandbox: blocked system call \n"), std::nullopt);
  EXPECT_EQ(sandbox_seccomp_reason("nothing"), "sandbox_seccomp");
}

TEST(SandboxReport, CheckNamesEveryMissingMechanism) {
  const Json host{{"mnt", "mnt:[1]"}, {"net", "net:[2]"}, {"ipc", "ipc:[3]"}};
  Json good{{"Uid", "65534\t65534\t65534\t65534"},
            {"Seccomp", "2"},
            {"no_new_privs", 1},
            {"root_read_only", true},
            {"scratch_writable", true},
            {"network_interfaces", Json::array({"lo"})},
            {"namespaces", {{"mnt", "mnt:[9]"}, {"net", "net:[8]"}, {"ipc", "ipc:[7]"}}}};
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
    good[set] = "0000000000000000";
  EXPECT_TRUE(check_sandbox_report(good, host, true, true).ok());
  Json bad = good;
  bad["Uid"] = "0\t0\t0\t0";
  bad["CapBnd"] = "000001ffffffffff";
  bad["no_new_privs"] = 0;
  bad["Seccomp"] = "0";
  bad["root_read_only"] = false;
  bad["scratch_writable"] = false;
  bad["namespaces"] = host;
  bad["network_interfaces"] = Json::array({"lo", "eth0"});
  auto checked = check_sandbox_report(bad, host, true, true);
  ASSERT_FALSE(checked.ok());
  for (const char* missing :
       {"uid 0", "CapBnd", "no_new_privs", "seccomp", "/ is writable", "scratch", "mount namespace",
        "network namespace", "IPC namespace", "eth0"})
    EXPECT_NE(checked.error().message.find(missing), std::string::npos) << missing;
  // Namespaces not asked for are not required.
  Json shared_net = good;
  shared_net["namespaces"]["net"] = "net:[2]";
  shared_net["network_interfaces"] = Json::array({"lo", "eth0"});
  EXPECT_TRUE(check_sandbox_report(shared_net, host, false, true).ok());
}

}  // namespace
}  // namespace ptxb
