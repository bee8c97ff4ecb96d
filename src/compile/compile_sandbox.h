// The compile stage's sandbox (docs/integrity.md "Compile stage", docs/compile.md).
//
// nvcc runs cicc, ptxas, the host g++ and binutils on the candidate's source: trusted programs,
// untrusted input. The input can still make them read files (`#include "/etc/passwd"`, assembler
// `.incbin`/`.include`), grow without bound (`#include "/dev/zero"`, template or constexpr
// bombs) or write without bound (`.fill`/`.skip` of gigabytes). So every tool of the compile
// stage runs under `ptxbench-sandbox` with the compiler profile built here: a view that holds
// only the system dirs the host compiler needs (/usr, /lib*, /bin, /sbin, the loader's cache),
// the toolkit, the knowledge-pack headers — read-only — and the staging dir (writable); no
// network; an unprivileged uid; rlimits on address space, file size, CPU and processes; the
// compiler seccomp profile. A tool stopped by a limit becomes a COMPILE_ERROR verdict naming the
// limit (compile_limit_kill), never a harness error.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compile/toolchain.h"
#include "core/process.h"
#include "core/result.h"
#include "sandbox/sandbox_policy.h"

namespace ptxb {

struct CompileSandboxOptions {
  // false: tools run unsandboxed (`eval --unsafe-no-sandbox`; the log says so).
  bool enabled = true;
  std::string launcher;  // "" = ptxbench-sandbox next to the running executable
  // RLIMIT_AS of every tool process. Compilers, unlike CUDA programs, reserve little address
  // space (nvcc/cicc/ptxas/cc1plus peak well under 1 GiB on the GEMM rungs), so the address
  // space is an honest memory bound; 6 GiB leaves room for big legitimate kernels while two
  // concurrent compiles still fit a small CI machine. The limit is per process, not per compile.
  std::uint64_t memory_bytes = 6ull << 30;
  // RLIMIT_FSIZE: no legitimate object, PTX, cubin or .so of a kernel comes near 64 MiB; a
  // `.fill` of hundreds of MiB is stopped at the first write past it.
  std::uint64_t file_size_bytes = 64ull << 20;
  // RLIMIT_NPROC counts every process and thread of the sandbox uid (shared with the runners).
  std::uint64_t max_processes = 256;
  std::uint64_t tmp_bytes = 512ull << 20;  // the view's private /tmp (nvcc's temporary files)
};

// The launcher to use: options.launcher, else ptxbench-sandbox in the helpers' folder
// (core/install_layout.h); an error names where it looked.
Result<std::string> compile_sandbox_launcher(const CompileSandboxOptions& options);

// Read-only paths of the compile view: the system dirs the host compiler needs, the toolkit
// folders of every tool (resolved), the knowledge-pack include dirs.
std::vector<std::string> compile_view_paths(const ToolchainInfo& toolchain,
                                            const std::vector<std::string>& include_dirs);

// The toolkit folders (for the log's <cuda>): the resolved parent of each tool's bin dir, and
// the unresolved one too (/usr/local/cuda -> /usr/local/cuda-13.0).
std::vector<std::string> toolkit_dirs(const ToolchainInfo& toolchain);

// The policy of one tool run: `staging_dir` is the only writable place, `working_dir` (it or a
// folder below it) the tool's cwd; CPU seconds from the compile's wall-time budget.
SandboxPolicy compile_sandbox_policy(const CompileSandboxOptions& options,
                                     const ToolchainInfo& toolchain,
                                     const std::vector<std::string>& include_dirs,
                                     const std::string& staging_dir, const std::string& working_dir,
                                     std::chrono::milliseconds timeout);

// A tool that a limit stopped: reason compile_limit_memory / compile_limit_file_size /
// compile_limit_cpu / compile_limit_processes / compile_sandbox_seccomp, with a message naming
// the limit. Read from how the launched tool ended and what it (or nvcc, for a child) printed.
struct LimitKill {
  std::string reason;
  std::string message;
};
std::optional<LimitKill> compile_limit_kill(const ProcessResult& result,
                                            const CompileSandboxOptions& options,
                                            const std::string& tool);

// The launcher itself failed (exit 121 with its line): the sandbox could not be set up.
bool compile_sandbox_setup_failed(const ProcessResult& result);

// lchown of every entry of `dir` (and itself): the staging dir goes to the sandbox uid before
// the tools run, and back to the harness before it is published.
Status chown_tree(const std::string& dir, std::uint32_t uid, std::uint32_t gid);

}  // namespace ptxb
