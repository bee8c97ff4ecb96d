#include "agent/task_prompt.h"

namespace ptxb {

std::string reference_label(const std::string& backend) {
  if (backend == "cublaslt_gemm") return "cuBLASLt";
  if (backend == "cudnn_sdpa_fwd") return "cuDNN SDPA (forward)";
  if (backend == "cudnn_sdpa_bwd") return "cuDNN SDPA (backward)";
  if (backend == "flashinfer_gqa_paged_decode") return "FlashInfer 0.6.14 (batch paged decode)";
  if (backend == "flashinfer_gqa_paged_prefill") return "FlashInfer 0.6.14 (SM90 paged prefill)";
  if (backend == "flashinfer_gqa_ragged_prefill") return "FlashInfer 0.6.14 (SM90 ragged prefill)";
  if (backend == "plain_cuda") return "";
  return backend;
}

PromptTask prompt_task_from(const Task& task) {
  PromptTask prompt_task;
  prompt_task.definition = task.definition;
  prompt_task.arch = task.arch;
  const auto values = task.axis_values();  // keyed by name: re-order as the definition does
  for (const auto& axis : task.definition.axes)
    if (auto it = values.find(axis.name); it != values.end())
      prompt_task.axis_values.emplace_back(axis.name, it->second);
  prompt_task.atol = task.tolerance.atol;
  prompt_task.rtol = task.tolerance.rtol;
  prompt_task.target_speedup = task.target_speedup;
  prompt_task.reference = reference_label(task.reference_backend);
  return prompt_task;
}

Result<Prompt> build_task_prompt(const PackLibrary& library, const Task& task,
                                 const std::string& variant) {
  return build_prompt(library, prompt_task_from(task), variant);
}

}  // namespace ptxb
