#include "compile/compile_sandbox.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/fs.h"
#include "core/install_layout.h"
#include "core/strings.h"

namespace ptxb {
namespace {

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

std::string gib(std::uint64_t bytes) {
  if (bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  return fmt::format("{} MiB", bytes >> 20);
}

// Lines a tool printed itself (not echoed source lines, which are indented, and not diagnostics
// located in the candidate's file, whose text the candidate controls).
bool tool_says(const std::string& output, std::initializer_list<const char*> needles) {
  for (const auto& line : split_lines(output)) {
    if (line.empty() || std::isspace(static_cast<unsigned char>(line[0]))) continue;
    if (starts_with(line, "kernel.cu") || contains(line, ".cu(") || contains(line, ".cu:"))
      continue;
    for (const char* needle : needles)
      if (contains(line, needle)) return true;
  }
  return false;
}

}  // namespace

Result<std::string> compile_sandbox_launcher(const CompileSandboxOptions& options) {
  std::string path = options.launcher;
  if (path.empty()) {
    // The installed layout's helper folder (libexec/ptxbench), or the build tree's.
    PTXB_ASSIGN_OR_RETURN(FoundDir helpers, find_helpers_dir());
    path = helpers.path + "/ptxbench-sandbox";
  }
  if (::access(path.c_str(), X_OK) != 0)
    return make_error("sandbox", "compile sandbox: the launcher {} is missing or not executable",
                      path);
  return path;
}

std::vector<std::string> toolkit_dirs(const ToolchainInfo& toolchain) {
  std::vector<std::string> dirs;
  for (const ToolInfo* tool :
       {&toolchain.nvcc, &toolchain.ptxas, &toolchain.cuobjdump, &toolchain.nvdisasm}) {
    if (tool->path.empty()) continue;
    dirs.push_back(parent_of(parent_of(tool->path)));
    dirs.push_back(parent_of(parent_of(canonical_path(tool->path))));
  }
  if (!toolchain.cuda_include_dir.empty()) {
    dirs.push_back(parent_of(toolchain.cuda_include_dir));
    dirs.push_back(parent_of(canonical_path(toolchain.cuda_include_dir)));
  }
  // The conventional name, which nvcc's own messages use when that is how it was found.
  if (path_exists("/usr/local/cuda") &&
      std::find(dirs.begin(), dirs.end(), canonical_path("/usr/local/cuda")) != dirs.end())
    dirs.push_back("/usr/local/cuda");
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  dirs.erase(std::remove_if(dirs.begin(), dirs.end(),
                            [](const std::string& d) { return d == "/" || d == "/usr"; }),
             dirs.end());
  return dirs;
}

std::vector<std::string> compile_view_paths(const ToolchainInfo& toolchain,
                                            const std::vector<std::string>& include_dirs) {
  // /usr holds g++, binutils, /usr/include, libstdc++ and (usually) the toolkit; the top-level
  // /bin, /lib* and /sbin are symlinks into it on merged-/usr systems (recreated as symlinks).
  // From /etc only what the dynamic loader reads and the alternatives symlinks (cc, c++).
  std::vector<std::string> paths = {"/usr",
                                    "/bin",
                                    "/sbin",
                                    "/lib",
                                    "/lib32",
                                    "/lib64",
                                    "/libx32",
                                    "/etc/ld.so.cache",
                                    "/etc/ld.so.conf",
                                    "/etc/ld.so.conf.d",
                                    "/etc/alternatives"};
  for (const auto& dir : toolkit_dirs(toolchain))
    if (is_directory(dir)) paths.push_back(canonical_path(dir));
  for (const auto& dir : include_dirs)
    if (is_directory(dir)) paths.push_back(canonical_path(dir));
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

SandboxPolicy compile_sandbox_policy(const CompileSandboxOptions& options,
                                     const ToolchainInfo& toolchain,
                                     const std::vector<std::string>& include_dirs,
                                     const std::string& staging_dir, const std::string& working_dir,
                                     std::chrono::milliseconds timeout) {
  SandboxPolicy policy;
  policy.scratch_dir = staging_dir;
  policy.scratch_tmpfs = false;
  policy.working_dir = working_dir;
  policy.view = true;
  policy.view_read_only = compile_view_paths(toolchain, include_dirs);
  // cuobjdump finds nvdisasm through /proc/self/exe (it crashes without it); the view's /proc
  // shows only the sandbox uid's processes and nothing else.
  policy.view_proc = true;
  policy.network_namespace = true;
  policy.loopback_up = false;
  policy.ipc_namespace = true;
  policy.tmp_bytes = options.tmp_bytes;
  policy.seccomp = SeccompProfile::kCompiler;
  policy.address_space_bytes = options.memory_bytes;
  policy.file_size_bytes = options.file_size_bytes;
  policy.max_processes = options.max_processes;
  // CPU seconds per process: the wall-time budget rounded up. The wall-time limit (the process
  // group is killed) is what normally ends a slow compile; this one catches a busy loop that
  // outlives a killed parent.
  policy.cpu_seconds = static_cast<std::uint64_t>((timeout.count() + 999) / 1000) + 1;
  // A fixed, small environment: no variable of the harness reaches the tools. LC_ALL=C keeps
  // the tools' messages in the words compile_limit_kill reads.
  policy.env_allow = {};
  const std::string nvcc_bin = parent_of(toolchain.nvcc.path);
  policy.set_env = {"PATH=" + nvcc_bin + ":/usr/local/bin:/usr/bin:/bin", "TMPDIR=/tmp",
                    "LC_ALL=C"};
  return policy;
}

std::optional<LimitKill> compile_limit_kill(const ProcessResult& result,
                                            const CompileSandboxOptions& options,
                                            const std::string& tool) {
  if (result.succeeded() || result.timed_out) return std::nullopt;
  const std::string output = result.stdout_text + "\n" + result.stderr_text;
  const int sig = result.term_signal;
  if (sig == SIGXFSZ ||
      tool_says(output, {"File size limit exceeded", "File too large", "signal 25", "SIGXFSZ"}))
    return LimitKill{"compile_limit_file_size",
                     fmt::format("{}: a compiler process tried to write a file larger than the "
                                 "compile sandbox's file size limit of {} (RLIMIT_FSIZE) and was "
                                 "stopped (e.g. a huge .fill/.skip/.zero or array in the object)",
                                 tool, gib(options.file_size_bytes))};
  if (sig == SIGXCPU || tool_says(output, {"CPU time limit exceeded", "signal 24", "SIGXCPU"}))
    return LimitKill{"compile_limit_cpu",
                     fmt::format("{}: a compiler process used more CPU time than the compile "
                                 "sandbox allows (RLIMIT_CPU) and was stopped",
                                 tool)};
  if (sig == SIGKILL ||
      tool_says(output,
                {"out of memory", "Out of memory", "std::bad_alloc", "Cannot allocate memory",
                 "cannot allocate memory", "memory exhausted", "Insufficient memory",
                 "insufficient memory", "signal 9", "Killed signal", "bad_alloc"}))
    return LimitKill{"compile_limit_memory",
                     fmt::format("{}: a compiler process ran out of memory: the compile sandbox "
                                 "limits each compiler process to {} of address space "
                                 "(RLIMIT_AS; e.g. a compile-time memory bomb: deep template "
                                 "instantiation, a huge constexpr array, a huge include)",
                                 tool, gib(options.memory_bytes))};
  if (sig == SIGSYS || tool_says(output, {"Bad system call", "signal 31"}))
    return LimitKill{"compile_sandbox_seccomp",
                     fmt::format("{}: a compiler process made a system call the compile "
                                 "sandbox's seccomp profile blocks and was stopped",
                                 tool)};
  if (tool_says(output, {"Resource temporarily unavailable"}) &&
      tool_says(output, {"fork", "exec", "spawn"}))
    return LimitKill{
        "compile_limit_processes",
        fmt::format("{}: a compiler process could not start another: the compile "
                    "sandbox's process limit ({} of its uid, RLIMIT_NPROC) was reached",
                    tool, options.max_processes)};
  return std::nullopt;
}

bool compile_sandbox_setup_failed(const ProcessResult& result) {
  return !result.timed_out && result.term_signal == 0 &&
         result.exit_code == kSandboxExitSetupFailed &&
         contains(result.stderr_text, kSandboxSetupErrorPrefix);
}

Status chown_tree(const std::string& dir, std::uint32_t uid, std::uint32_t gid) {
  if (::lchown(dir.c_str(), uid, gid) != 0)
    return make_error("io", "chown {}: {}", dir, std::strerror(errno));
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::string path = it->path().string();
    if (::lchown(path.c_str(), uid, gid) != 0)
      return make_error("io", "chown {}: {}", path, std::strerror(errno));
  }
  if (ec) return make_error("io", "{}: cannot list directory: {}", dir, ec.message());
  return ok_status();
}

}  // namespace ptxb
