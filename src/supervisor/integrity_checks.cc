#include "supervisor/integrity_checks.h"

#include <algorithm>

#include "core/strings.h"
#include "core/symbol_names.h"
#include "eval/integrity_reasons.h"
#include "eval/timing_stats.h"

namespace ptxb {
namespace {

// CUDA errors that mean the kernel touched memory it does not own (design.md §3.1: MEMORY_ERROR).
// cudaErrorLaunchFailure is what an out-of-bounds access in a kernel raises on Hopper when the
// fault is not attributed more precisely (seen on the H200: a write 2^31 elements past C).
bool is_memory_fault(const std::string& cuda_error_name) {
  return cuda_error_name == "cudaErrorIllegalAddress" ||
         cuda_error_name == "cudaErrorMisalignedAddress" ||
         cuda_error_name == "cudaErrorLaunchFailure" ||
         cuda_error_name == "cudaErrorInvalidAddressSpace";
}

Finding finding(PtxbStatus status, std::string_view reason, std::string detail) {
  return Finding{status, std::string(reason), std::move(detail)};
}

std::string describe_tasks(const std::vector<LeftoverTask>& tasks) {
  std::string out;
  for (std::size_t i = 0; i < tasks.size() && i < 3; ++i)
    out += fmt::format("{}{} '{}'", i ? ", " : "", tasks[i].id, tasks[i].name);
  if (tasks.size() > 3) out += fmt::format(" and {} more", tasks.size() - 3);
  return out;
}

}  // namespace

std::optional<Finding> reply_findings(const CallReply& reply, const ReplyCheckOptions& options) {
  if (reply.cuda_error) {
    const auto& e = *reply.cuda_error;
    const bool memory = is_memory_fault(e.name);
    return finding(memory ? PtxbStatus::kMemoryError : PtxbStatus::kRuntimeError,
                   memory ? reason::kIllegalAddress : reason::kCudaError,
                   fmt::format("{} ({}) at {}", e.name, e.message, e.where));
  }
  if (options.check_modules && !reply.unexpected_modules.empty()) {
    const auto& m = reply.unexpected_modules.front();
    return finding(PtxbStatus::kForbidden, reason::kRuntimeModule,
                   fmt::format("a CUDA module that is not the compiled cubin was loaded at run "
                               "time ({} bytes, sha256 {})",
                               m.bytes, m.sha256.substr(0, 16)));
  }
  if (options.check_modules && !options.cubin_functions.empty()) {
    for (const auto& name : reply.kernel_names)
      if (!kernel_in_cubin(name, options.cubin_functions))
        return finding(PtxbStatus::kForbidden, reason::kForeignKernel,
                       fmt::format("kernel {} ran during the call but is not a function of the "
                                   "compiled cubin (a library's kernel?)",
                                   demangle_symbol(name)));
  }
  if (options.check_leftovers && !reply.leftover_processes.empty())
    return finding(PtxbStatus::kRewardHack, reason::kLeftoverProcess,
                   fmt::format("child process(es) {} still running after run returned (all work "
                               "must be done by the call; no processes may be started)",
                               describe_tasks(reply.leftover_processes)));
  if (options.check_leftovers && !reply.leftover_threads.empty())
    return finding(PtxbStatus::kRewardHack, reason::kLeftoverThread,
                   fmt::format("thread(s) {} started by the candidate still running after run "
                               "returned (join every thread before returning)",
                               describe_tasks(reply.leftover_threads)));
  auto counted = std::find_if(reply.foreign_stream.begin(), reply.foreign_stream.end(),
                              [&](const ActivityRecord& r) {
                                return r.kind == "kernel" || options.check_copies_off_stream;
                              });
  if (counted != reply.foreign_stream.end()) {
    const auto& r = *counted;
    // Kernels by name; copies and memsets by how they were issued (the one tolerated form,
    // a synchronous copy on the legacy stream, never gets here).
    const std::string what =
        r.kind == "kernel" ? "kernel " + r.name
                           : fmt::format("{} {}{}", r.async ? "asynchronous" : "synchronous",
                                         r.name, r.legacy_stream ? " (legacy default stream)" : "");
    return finding(PtxbStatus::kRewardHack, reason::kForeignStream,
                   fmt::format("{} ran on stream {}, not on the stream passed to run ({})", what,
                               r.stream_id, reply.expected_stream_id));
  }
  if (!reply.out_of_window.empty()) {
    const auto& r = reply.out_of_window.front();
    return finding(PtxbStatus::kRewardHack, reason::kOutOfWindow,
                   fmt::format("GPU work outside the timed call: {} {} ({}, {})", r.kind, r.name,
                               r.attribution, r.relation));
  }
  if (reply.dropped_records > 0)
    return Finding{PtxbStatus::kInfraError, "cupti_dropped_records",
                   fmt::format("CUPTI dropped {} activity records", reply.dropped_records)};
  return std::nullopt;
}

bool kernel_in_cubin(const std::string& kernel, const std::vector<std::string>& cubin_functions) {
  if (std::find(cubin_functions.begin(), cubin_functions.end(), kernel) != cubin_functions.end())
    return true;
  const std::string demangled = demangle_symbol(kernel);
  const std::string identifier = kernel_identifier(kernel);
  for (const auto& function : cubin_functions) {
    if (demangle_symbol(function) == demangled) return true;
    if (!identifier.empty() && kernel_identifier(function) == identifier) return true;
  }
  return false;
}

std::optional<RefreshKind> draw_verified_call(std::mt19937_64& secret, double fraction) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  if (uniform(secret) >= fraction) return std::nullopt;
  return uniform(secret) < 1.0 / 3.0 ? RefreshKind::kFull : RefreshKind::kBlock;
}

const char* refresh_kind_name(RefreshKind kind) {
  return kind == RefreshKind::kFull ? "full" : "block";
}

std::optional<Finding> fresh_input_finding(const std::vector<double>& fresh_ns, double median_ns,
                                           double limit) {
  if (fresh_ns.empty() || median_ns <= 0) return std::nullopt;
  std::vector<double> sorted = fresh_ns;
  std::sort(sorted.begin(), sorted.end());
  const double fresh_median = percentile_sorted(sorted, 0.5);
  if (fresh_median <= limit * median_ns) return std::nullopt;
  return finding(
      PtxbStatus::kRewardHack, reason::kFreshInputSlowdown,
      fmt::format("calls right after the inputs were rewritten took {:.4f} ms (median "
                  "of {}), {:.1f}x the median {:.4f} ms of the other calls: only repeated "
                  "inputs are fast, i.e. results are cached across calls",
                  fresh_median * 1e-6, fresh_ns.size(), fresh_median / median_ns,
                  median_ns * 1e-6));
}

std::optional<Finding> cached_output_finding(const std::vector<std::pair<int, std::uint64_t>>& seen,
                                             int set, std::uint64_t output_hash) {
  for (const auto& [other_set, hash] : seen)
    if (other_set != set && hash == output_hash)
      return finding(PtxbStatus::kRewardHack, reason::kCachedOutput,
                     fmt::format("the outputs of the call on input set {} are bit-identical to "
                                 "those of an earlier call on input set {} (different inputs): "
                                 "results are returned from a cache",
                                 set, other_set));
  return std::nullopt;
}

}  // namespace ptxb
