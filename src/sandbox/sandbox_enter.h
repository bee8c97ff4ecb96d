// Entering the sandbox: the steps `ptxbench-sandbox` takes on itself before it execs the
// sandboxed program (docs/integrity.md has the policy; this is the mechanism).
//
// Runs in a fresh, single-threaded process (the launcher), so there is no fork-to-exec window
// with async-signal-safety rules: everything may allocate. Order matters:
//   1. resolve the program, build the environment and the seccomp filter (needs no privilege)
//   2. unshare mount + network + IPC namespaces (+ a user namespace when not root)
//   3. mounts: all propagation private; tmpfs on the scratch dir, /tmp and /dev/shm; an empty
//      file bound over each hidden library; then every mount read-only (recursively), except
//      the tmpfs and /proc (the CUDA driver writes its own process's files there)
//   4. `lo` up in the new network namespace
//   5. rlimits, then credentials: no supplementary groups, the policy's gid/uid (root), no
//      capabilities in any set, bounding set empty
//   6. no_new_privs, parent-death signal, close every descriptor not kept, chdir to scratch
//   7. load the seccomp filter, execve
// Any failure stops before the program runs.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "sandbox/sandbox_policy.h"

namespace ptxb {

// Applies `policy` to the calling process and execs `program_argv` with the sandboxed
// environment built from `environment`. Returns only on failure, with the step that failed.
Error exec_sandboxed(const SandboxPolicy& policy, const std::vector<std::string>& program_argv,
                     const std::vector<std::string>& environment);

}  // namespace ptxb
