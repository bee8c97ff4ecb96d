// The client's half of the compile split (docs/service.md "Compile split"): `ptxbench eval
// --remote` and `ptxbench run --evaluator` compile here, on a CPU machine, through the compile
// cache, and send the service the kernel.so and its PTX instead of asking it to compile. The
// service trusts none of this side's analysis: it re-runs the binary's checks itself
// (compile/compiler.h analyse_prebuilt).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/process.h"
#include "eval/eval_types.h"
#include "tasks/registry.h"

namespace ptxb::service {

// Compiles `request` here. Compiled: request.prebuilt points at the cached kernel.so and PTX
// (with their hashes and this toolchain's nvcc version) and the answer is nullopt: send it.
// Not compiled: the verdict itself (COMPILE_ERROR, FORBIDDEN), exactly as `ptxbench eval` gives
// it; no GPU is needed for it. Errors: no usable toolchain here (use --remote-compile).
Result<std::optional<EvalResult>> compile_for_service(EvalRequest& request,
                                                      const TaskRegistry& registry,
                                                      const std::vector<std::string>& tasks_dirs,
                                                      ProcessRunner& processes);

}  // namespace ptxb::service
