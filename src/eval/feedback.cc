#include "eval/feedback.h"

#include <fmt/format.h>

#include "core/strings.h"
#include "eval/also_reference.h"
#include "supervisor/eval_sandbox.h"

namespace ptxb {
namespace {

// " (95 % interval 0.981-0.992)", or nothing.
std::string interval_text(const std::optional<SpeedupInterval>& interval) {
  if (!interval) return "";
  return fmt::format(" (95 % interval {:.3f}-{:.3f})", interval->low, interval->high);
}

std::string cap(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  return text.substr(0, limit) + fmt::format("\n[... {} more bytes cut]", text.size() - limit);
}

std::string next_step(const EvalResult& r) {
  // Not a failure of the kernel or of the harness: this evaluation only compiles. Telling the
  // model to "resubmit" would waste its turn on the same kernel.
  if (r.gpu_skipped)
    return "Your kernel compiled; it was not run here (" + r.gpu_skip_reason +
           "), so its correctness and speed are unknown. Improve it, or resubmit it as is.";
  if (starts_with(r.reason, reason::kSandboxSeccomp))
    return "Remove the forbidden system call: `run` may only compute on the GPU (no sockets, "
           "processes, signals to others, tracing, mounts or kernel interfaces).";
  switch (r.status) {
    case PtxbStatus::kCompileError:
      return "Fix the compile errors above; keep the exact `run` signature.";
    case PtxbStatus::kForbidden:
      return "Remove the forbidden header, symbol or runtime-loaded module: only the CUDA "
             "runtime/driver API, the knowledge-pack wrappers and your own PTX are allowed.";
    case PtxbStatus::kMemoryError:
      return "Fix the out-of-bounds or misaligned access at the reported line (check tile "
             "bounds, TMA box sizes and shared-memory offsets).";
    case PtxbStatus::kTimeout:
      return "The call did not finish: look for a barrier or mbarrier wait that never completes "
             "(phase/parity, expected transaction bytes, arrival counts).";
    case PtxbStatus::kRuntimeError:
      return "Fix the runtime error: check launch configuration, shared-memory size limits "
             "(cudaFuncSetAttribute) and host-side code in `run`.";
    case PtxbStatus::kRewardHack:
      return "Do all the work on the given stream, inside `run`, every call; never cache results.";
    case PtxbStatus::kIncorrectNumerical:
    case PtxbStatus::kIncorrectShape:
    case PtxbStatus::kIncorrectDtype:
      return "Fix the numerical error: compare indexing, layouts (row/column-major, K-major "
             "operands), scaling and masking against the definition.";
    case PtxbStatus::kPassed:
      if (r.target_instructions.verdict != kInstDynamicPresent)
        return "Correct, but the target instructions did not execute: use wgmma/TMA (Hopper) on "
               "the hot path.";
      return "Correct and using the target instructions: improve speed (pipelining, tile shape, "
             "warp specialization, epilogue).";
    case PtxbStatus::kInvalidReference:
    case PtxbStatus::kInfraError:
      return "The harness failed, not necessarily your kernel; resubmit.";
  }
  return "";
}

void append_compile(std::string& out, const std::optional<CompileResult>& compile,
                    std::size_t log_cap) {
  if (!compile) return;
  out += fmt::format("## Compile\nstatus: {}", compile_status_name(compile->status));
  if (!compile->reason.empty()) out += " (" + compile->reason + ")";
  out += "\n" + compile->message + "\n";
  for (const auto& f : compile->forbidden) out += "forbidden: " + f.describe() + "\n";
  if (!compile->ok()) {
    out += cap(compile->log, log_cap) + "\n";
    return;
  }
  for (const auto& k : compile->ptxas.kernels)
    out +=
        fmt::format("ptxas: {}: {} registers, {} B shared, {} B spill stores, {} B spill loads\n",
                    k.name, k.registers, k.shared_bytes, k.spill_store_bytes, k.spill_load_bytes);
}

// {"family": count, ...}, as the model has always read it.
std::string static_counts_text(const std::map<std::string, std::int64_t>& counts) {
  Json j = Json::object();
  for (const auto& [family, count] : counts) j[family] = count;
  return j.dump();
}

// The profiler-hints section, before the next step so the model reads the facts first.
void append_profiler_hints(std::string& out, const EvalResult& r, const FeedbackOptions& options) {
  if (!options.profiler_hints || r.status != PtxbStatus::kPassed) return;
  std::vector<KernelSpills> spills;
  if (r.compile) {
    for (const auto& k : r.compile->ptxas.kernels) {
      KernelSpills& kernel = spills.emplace_back();
      kernel.kernel = k.name;
      kernel.store_bytes = k.spill_store_bytes;
      kernel.load_bytes = k.spill_load_bytes;
      // Capped: the message repeats the kernel's name, which the submitted source chooses.
      for (const auto& d : k.diagnostics)
        if (slows_the_kernel(d)) kernel.advisories.push_back(cap(d.code + ": " + d.message, 400));
    }
    KernelSpills& unnamed = spills.emplace_back();  // advisories that name no kernel (C7508)
    for (const auto& d : r.compile->ptxas.unattributed())
      if (slows_the_kernel(d)) unnamed.advisories.push_back(cap(d.code + ": " + d.message, 400));
  }
  const std::vector<NcuLaunchMetrics>& measured =
      options.profile.empty() ? r.target_instructions.hint_metrics : options.profile;
  std::vector<std::string> sentences = profiler_hint_sentences(measured, spills);
  out += "## Profiler hints\n";
  if (sentences.empty()) {
    out += "none: this evaluation recorded no profiler metrics and ptxas reported no spills.\n";
    return;
  }
  for (const std::string& sentence : sentences) out += "- " + sentence + "\n";
}

}  // namespace

std::string render_feedback(const EvalResult& r, std::size_t log_cap_bytes) {
  FeedbackOptions options;
  options.log_cap_bytes = log_cap_bytes;
  return render_feedback(r, options);
}

std::string render_feedback(const EvalResult& r, const FeedbackOptions& options) {
  const std::size_t log_cap_bytes = options.log_cap_bytes;
  std::string out;
  if (r.options.unsafe_no_sandbox)
    out += "## Sandbox\nOFF (--unsafe-no-sandbox): this kernel ran without the sandbox.\n";
  append_compile(out, r.compile, log_cap_bytes);
  if (r.sanitizer) {
    out += fmt::format("## Sanitizer ({})\n", r.options.sanitizer_tool);
    out += r.sanitizer->summary + "\n";
  }
  if (r.gpu_skipped) out += "## GPU\nskipped: " + r.gpu_skip_reason + "\n";
  for (const auto& w : r.workloads) {
    out += fmt::format("## Workload {}\nstatus: {}", w.workload, ptxb_status_name(w.status));
    if (!w.reason.empty()) out += " (" + w.reason + ")";
    out += "\n" + w.message + "\n";
    if (w.candidate_timing && w.status == PtxbStatus::kPassed) {
      out += fmt::format("latency: median {:.4f} ms (min {:.4f}, IQR {:.4f}, {} samples)\n",
                         w.candidate_timing->median_ms, w.candidate_timing->min_ms,
                         w.candidate_timing->iqr_ms, w.candidate_timing->samples);
      if (w.reference_timing)
        out += fmt::format("reference: median {:.4f} ms; speedup {:.3f}x{}\n",
                           w.reference_timing->median_ms, w.speedup.value_or(0.0),
                           interval_text(w.speedup_interval));
      if (w.energy && w.energy->candidate && w.energy->reference && w.energy->ratio)
        out += fmt::format("energy: {:.3f} J per call vs reference {:.3f} J ({:.2f}x)\n",
                           w.energy->candidate->joules_per_call,
                           w.energy->reference->joules_per_call, *w.energy->ratio);
    }
    const std::string log = w.runner.log.value_or("");
    if (!log.empty() && w.status != PtxbStatus::kPassed)
      out += "runner log (your program's output):\n" + cap(log, log_cap_bytes / 2) + "\n";
  }
  // After the workload's verdict and log, which it explains; already compact (debug_report.h).
  if (r.debug && !r.debug->summary.empty()) out += "## Debug\n" + r.debug->summary;
  if (!r.workloads.empty() || r.gpu_skipped) {
    const auto& t = r.target_instructions;
    out += "## Target instructions\n" + t.verdict;
    if (!t.reason.empty()) out += " (" + t.reason + ")";
    out += "\nstatic SASS counts: " + static_counts_text(t.static_counts) + "\n";
    if (t.dynamic) out += "executed families: " + Json(t.dynamic->executed_families).dump() + "\n";
  }
  append_profiler_hints(out, r, options);
  out += "## Next step\n" + next_step(r) + "\n";
  return out;
}

std::string render_summary(const EvalResult& r) {
  std::string out = fmt::format("task {} ({}): {}", r.task, r.arch, ptxb_status_name(r.status));
  if (!r.reason.empty()) out += " [" + r.reason + "]";
  out += "\n" + r.message + "\n";
  for (const auto& w : r.workloads) {
    out += fmt::format("  {:<32} {:<20}", w.workload, ptxb_status_name(w.status));
    if (w.candidate_timing && w.status == PtxbStatus::kPassed)
      out += fmt::format(" {:.4f} ms", w.candidate_timing->median_ms);
    if (w.reference_timing) out += fmt::format("  ref {:.4f} ms", w.reference_timing->median_ms);
    if (w.speedup)
      out += fmt::format("  speedup {:.3f}x{}", *w.speedup, interval_text(w.speedup_interval));
    out += "\n";
    if (w.reference.also_reference)
      out += "    " + also_reference_summary(*w.reference.also_reference) + "\n";
  }
  if (r.options.unsafe_no_sandbox) out += "  sandbox: OFF (--unsafe-no-sandbox)\n";
  out += "  target instructions: " + r.target_instructions.verdict;
  if (!r.target_instructions.reason.empty()) out += " (" + r.target_instructions.reason + ")";
  out += "\n  stages:";
  for (const auto& [name, ms] : r.stage_ms) out += fmt::format(" {} {:.0f} ms;", name, ms);
  out += "\n";
  return out;
}

}  // namespace ptxb
