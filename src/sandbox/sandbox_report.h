// What a process can see of its own sandbox, and the check that it is the one asked for.
//
// `ptxbench-sandbox --report` prints sandbox_self_report() as JSON. The supervisor runs it once
// inside the very policy its runners will get (a self-check before any candidate code runs),
// records it in the trace (`environment.sandbox.report`) and refuses to evaluate unless
// check_sandbox_report() finds every mechanism in effect: no sandbox is ever silently weaker
// than asked.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// The calling process's namespace ids ("net:[4026531840]", ...) for mnt, net, ipc, user, pid.
Json namespace_ids();

// Facts read from the kernel about the calling process: uid/gid/groups and capability sets
// (/proc/self/status), no_new_privs and the seccomp mode, namespace ids, whether / is mounted
// read-only, whether `scratch_dir` takes a new file, the network interfaces it sees
// (/proc/net/dev), and the names (not values) of its environment variables.
Json sandbox_self_report(const std::string& scratch_dir);

// Checks `report` (from inside the sandbox) against `host_namespaces` (namespace_ids() of the
// supervisor) and the expectations of the policy it ran under. `network_namespace`/
// `ipc_namespace` say whether those namespaces were asked for. The error lists every
// mechanism that is missing.
Status check_sandbox_report(const Json& report, const Json& host_namespaces, bool network_namespace,
                            bool ipc_namespace);

}  // namespace ptxb
