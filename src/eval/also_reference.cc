#include "eval/also_reference.h"

#include <fmt/format.h>

#include "core/strings.h"

namespace ptxb {
namespace {

constexpr const char* kNames[] = {"flashinfer"};

// The MHA forward tasks: the ones whose primary reference is cuDNN's SDPA forward (the paper's
// mha_with_lse_d128[_causal] and the held-out d64/d96 forms).
bool is_mha_forward(const Task& task) {
  return task.reference_backend == "cudnn_sdpa_fwd";
}

}  // namespace

std::string also_reference_names() {
  std::string out;
  for (const char* name : kNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

bool is_also_reference_name(const std::string& name) {
  for (const char* known : kNames)
    if (name == known) return true;
  return false;
}

Result<std::string> also_reference_selector(const std::string& name, const Task& task) {
  if (!is_also_reference_name(name))
    return make_error("usage", "--also-reference {}: unknown second reference (known: {})", name,
                      also_reference_names());
  if (!is_mha_forward(task))
    return make_error("usage",
                      "--also-reference {}: task {} is not an MHA forward task (its reference is "
                      "{}); FlashInfer is a second reference only for the mha_with_lse_* tasks, "
                      "whose primary reference is cudnn_sdpa_fwd (docs/references.md)",
                      name, task.name, task.reference_backend);
  // FlashInfer's SM90 kernels; the Blackwell tasks' GPU stages do not run in this build anyway.
  if (task.arch != "sm_90a")
    return make_error("usage",
                      "--also-reference {}: task {} targets {}; the FlashInfer reference kernels "
                      "are built for sm_90a only",
                      name, task.name, task.arch);
  return std::string("flashinfer_mha_prefill") +
         (ends_with(task.cost_model, "_causal") ? ":causal" : "");
}

Status check_also_reference(const std::string& name, const Task& task, bool flashinfer_built) {
  if (name.empty()) return ok_status();
  if (auto selector = also_reference_selector(name, task); !selector.ok()) return selector.error();
  if (!flashinfer_built)
    return make_error("usage",
                      "--also-reference {}: this build has no FlashInfer kernels; configure with "
                      "-DPTXB_WITH_FLASHINFER=ON (PTXB_WITH_FLASHINFER=ON bash scripts/setup.sh "
                      "installs the FlashInfer headers and builds)",
                      name);
  return ok_status();
}

std::string also_reference_summary(const AlsoReferenceRecord& r) {
  std::string out = fmt::format("also reference {} ({}): ", r.name, r.backend);
  if (r.status == "measured" && r.timing) {
    out += fmt::format("{:.4f} ms", r.timing->median_ms);
    if (r.speedup) out += fmt::format("; speedup {:.3f}x", *r.speedup);
    return out;
  }
  // The first line of the why: a runner's log tail follows it for the JSON reader.
  return out + r.status + ": " + r.why.substr(0, r.why.find('\n'));
}

}  // namespace ptxb
