// FLOP counts and minimum bytes moved per task (formulas documented in docs/tasks.md). They feed
// the physical-floor check of the timing contract (design.md §3.4) and throughput reports, so each
// formula counts exactly what docs/tasks.md says, from the definition and the workload's axes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "trace/definition.h"

namespace ptxb {

struct CostEstimate {
  double flops = 0;
  double min_bytes = 0;
};

// "gemm", "attention_fwd", "attention_fwd_causal", "attention_bwd", "attention_bwd_causal",
// "gqa_paged_decode", "gqa_paged_prefill_causal", "gqa_ragged_prefill_causal".
const std::vector<std::string>& cost_model_names();

// Minimum bytes = every input and output tensor read or written once (scalars, passed by
// value, excluded): sum over tensors of product(shape) * dtype size.
Result<double> tensor_bytes(const Definition& definition,
                            const std::map<std::string, std::int64_t>& axis_values);

// Errors name the model and the missing axis or violated assumption.
Result<CostEstimate> compute_cost(const std::string& model, const Definition& definition,
                                  const std::map<std::string, std::int64_t>& axis_values);

}  // namespace ptxb
