// The optional second reference of an evaluation (`ptxbench eval --also-reference NAME`,
// EvalOptions::also_reference; docs/references.md "A second reference"): a library the task's
// primary reference is compared with, timed only when asked, so the default evaluation does not
// get slower. The primary reference (the task manifest's `reference_backend`) stays the one the
// verdict, the speedup and the per-call limit use.
//
// Which names exist and on which tasks (checked before anything is compiled):
//   flashinfer   the MHA forward tasks (reference cudnn_sdpa_fwd, sm_90a): FlashInfer's SM90
//                prefill, backend flashinfer_mha_prefill (references/flashinfer/flashinfer_mha.h);
//                a head dim it has no kernel for (96) is not refused here: the evaluation runs and
//                the record says why the library did not (status "unavailable")
// A build without the FlashInfer kernels refuses the name with the CMake option to turn on.
//
// The supervisor's side (supervisor/stage_also_reference.cc): after the candidate PASSED, one
// reference runner with this selector, correctness calls on the correctness input sets against
// the task reference's outputs (task tolerance), then the same sequential sampling code that
// calibrates the primary reference; the result in workload.reference.also_reference.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "eval/eval_types.h"
#include "tasks/task.h"

namespace ptxb {

// "flashinfer": the accepted values of --also-reference, comma-separated for messages.
std::string also_reference_names();
bool is_also_reference_name(const std::string& name);

// What the second reference's runner loads for `task` (protocol/reference_selector.h):
// "flashinfer_mha_prefill" or "flashinfer_mha_prefill:causal"; a "usage" error naming the task
// and what the option accepts when the name does not fit the task.
Result<std::string> also_reference_selector(const std::string& name, const Task& task);

// also_reference_selector's checks, plus this build's: `flashinfer_built` false (a build without
// -DPTXB_WITH_FLASHINFER=ON) refuses "flashinfer" with a message naming the option. The CLI and
// the evaluation pipeline call it before compiling; "" (no second reference) always passes.
Status check_also_reference(const std::string& name, const Task& task, bool flashinfer_built);

// One line for people (`ptxbench eval` without --json):
//   "also reference flashinfer (flashinfer_mha_prefill): 2.4100 ms; speedup 0.952x"
//   "also reference flashinfer (flashinfer_mha_prefill): unavailable: <the library's why>"
std::string also_reference_summary(const AlsoReferenceRecord& record);

}  // namespace ptxb
