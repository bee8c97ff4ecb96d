// ptxbench-sandbox: runs one program inside the sandbox of design.md §3.3 (docs/integrity.md).
//
//   ptxbench-sandbox --policy-json JSON -- PROGRAM [ARGS...]
//       Applies the SandboxPolicy (sandbox/sandbox_policy.h) to itself — namespaces, read-only
//       mounts with a tmpfs scratch, unprivileged uid, no capabilities, rlimits, closed
//       descriptors, scrubbed environment, seccomp — then execs PROGRAM in place (same pid).
//       Exit 121 with one line "ptxbench-sandbox: setup failed: STEP: WHY" on stderr if any
//       step fails; PROGRAM never runs unsandboxed.
//   ptxbench-sandbox --report [SCRATCH_DIR]
//       Prints what the calling process sees of its sandbox as JSON (sandbox/sandbox_report.h);
//       the supervisor runs it as PROGRAM for its self-check.
//
// Trusted and small on purpose: it parses one JSON object, makes system calls, and execs.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/process.h"
#include "sandbox/sandbox_enter.h"
#include "sandbox/sandbox_report.h"

namespace {

constexpr const char* kUsage =
    "usage: ptxbench-sandbox --policy-json JSON -- PROGRAM [ARGS...]\n"
    "       ptxbench-sandbox --report [SCRATCH_DIR]\n";

int setup_failed(const std::string& why) {
  std::fprintf(stderr, "%s%s\n", ptxb::kSandboxSetupErrorPrefix, why.c_str());
  return ptxb::kSandboxExitSetupFailed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--report") == 0) {
    std::printf("%s\n", ptxb::sandbox_self_report(argc >= 3 ? argv[2] : "").dump().c_str());
    return 0;
  }
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc < 5 || std::strcmp(argv[1], "--policy-json") != 0 || std::strcmp(argv[3], "--") != 0) {
    std::fputs(kUsage, stderr);
    return setup_failed("bad command line");
  }
  ptxb::Json json;
  try {
    json = ptxb::Json::parse(argv[2]);
  } catch (const std::exception& e) {
    return setup_failed(std::string("--policy-json: ") + e.what());
  }
  auto policy = ptxb::SandboxPolicy::from_json(json);
  if (!policy.ok()) return setup_failed(policy.error().message);
  const std::vector<std::string> program(argv + 4, argv + argc);
  const ptxb::Error error = ptxb::exec_sandboxed(*policy, program, ptxb::current_environment());
  return setup_failed(error.message);
}
