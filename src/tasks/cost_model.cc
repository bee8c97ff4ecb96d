#include "tasks/cost_model.h"

#include <algorithm>

#include "core/strings.h"

namespace ptxb {
namespace {

using AxisValues = std::map<std::string, std::int64_t>;

Result<double> axis(const AxisValues& values, const std::string& model,
                    std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (auto it = values.find(name); it != values.end()) return static_cast<double>(it->second);
  std::vector<std::string> spelled(names.begin(), names.end());
  return make_error("validation", "cost model '{}' needs axis {}", model, join(spelled, " or "));
}

// Number of (query, key) pairs a causal mask leaves for `segments` sequences of `length` tokens
// with as many queries as keys: row i sees i+1 keys, so length*(length+1)/2 per sequence.
double causal_pairs(double segments, double length) {
  return segments * length * (length + 1) / 2;
}

// Attention over B*H heads of S queries and S keys with head dim D. Forward: QK^T and PV are two
// GEMMs of 2*S*S*D flops each -> 4*B*H*S^2*D. Backward: five GEMMs of the same size (recompute
// QK^T, dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q) -> 2.5x the forward.
Result<double> attention_flops(const std::string& model, const AxisValues& values, bool causal,
                               double gemm_count) {
  PTXB_ASSIGN_OR_RETURN(double batch, axis(values, model, {"B"}));
  PTXB_ASSIGN_OR_RETURN(double heads, axis(values, model, {"H"}));
  PTXB_ASSIGN_OR_RETURN(double seq, axis(values, model, {"S"}));
  PTXB_ASSIGN_OR_RETURN(double dim, axis(values, model, {"D", "d"}));
  const double pairs = causal ? causal_pairs(batch * heads, seq) : batch * heads * seq * seq;
  return gemm_count * 2 * pairs * dim;
}

// Causal prefill with one segment per request, all segments of one length and as many queries
// as keys (how our GQA workloads are generated; docs/tasks.md).
Result<double> gqa_prefill_flops(const std::string& model, const AxisValues& values,
                                 double total_kv) {
  PTXB_ASSIGN_OR_RETURN(double heads, axis(values, model, {"num_qo_heads"}));
  PTXB_ASSIGN_OR_RETURN(double dim, axis(values, model, {"head_dim"}));
  PTXB_ASSIGN_OR_RETURN(double total_q, axis(values, model, {"total_q"}));
  PTXB_ASSIGN_OR_RETURN(double len_indptr, axis(values, model, {"len_indptr"}));
  const double segments = len_indptr - 1;
  if (segments < 1)
    return make_error("validation", "cost model '{}': len_indptr must be >= 2", model);
  if (total_q != total_kv)
    return make_error("validation",
                      "cost model '{}' assumes as many queries as keys per request; got {} "
                      "query and {} key tokens",
                      model, total_q, total_kv);
  const auto total = static_cast<std::int64_t>(total_q);
  const auto count = static_cast<std::int64_t>(segments);
  if (total % count != 0)
    return make_error("validation",
                      "cost model '{}' assumes equal-length requests; {} tokens do not split "
                      "into {} requests",
                      model, total, count);
  return 4 * heads * dim * causal_pairs(segments, total_q / segments);
}

Result<double> model_flops(const std::string& model, const AxisValues& values) {
  if (model == "gemm") {
    PTXB_ASSIGN_OR_RETURN(double m, axis(values, model, {"M"}));
    PTXB_ASSIGN_OR_RETURN(double n, axis(values, model, {"N"}));
    PTXB_ASSIGN_OR_RETURN(double k, axis(values, model, {"K"}));
    return 2 * m * n * k;
  }
  if (model == "attention_fwd") return attention_flops(model, values, false, 2);
  if (model == "attention_fwd_causal") return attention_flops(model, values, true, 2);
  if (model == "attention_bwd") return attention_flops(model, values, false, 5);
  if (model == "attention_bwd_causal") return attention_flops(model, values, true, 5);
  if (model == "gqa_paged_decode") {
    // One query token per request against all of its cached tokens (pages are full at ps=1).
    PTXB_ASSIGN_OR_RETURN(double heads, axis(values, model, {"num_qo_heads"}));
    PTXB_ASSIGN_OR_RETURN(double dim, axis(values, model, {"head_dim"}));
    PTXB_ASSIGN_OR_RETURN(double indices, axis(values, model, {"num_kv_indices"}));
    PTXB_ASSIGN_OR_RETURN(double page_size, axis(values, model, {"page_size"}));
    return 4 * heads * dim * indices * page_size;
  }
  if (model == "gqa_paged_prefill_causal") {
    PTXB_ASSIGN_OR_RETURN(double indices, axis(values, model, {"num_kv_indices"}));
    PTXB_ASSIGN_OR_RETURN(double page_size, axis(values, model, {"page_size"}));
    return gqa_prefill_flops(model, values, indices * page_size);
  }
  if (model == "gqa_ragged_prefill_causal") {
    PTXB_ASSIGN_OR_RETURN(double total_kv, axis(values, model, {"total_kv"}));
    return gqa_prefill_flops(model, values, total_kv);
  }
  return make_error("validation", "unknown cost model '{}' (known: {})", model,
                    join(cost_model_names(), ", "));
}

}  // namespace

const std::vector<std::string>& cost_model_names() {
  static const std::vector<std::string> names = {"gemm",
                                                 "attention_fwd",
                                                 "attention_fwd_causal",
                                                 "attention_bwd",
                                                 "attention_bwd_causal",
                                                 "gqa_paged_decode",
                                                 "gqa_paged_prefill_causal",
                                                 "gqa_ragged_prefill_causal"};
  return names;
}

Result<double> tensor_bytes(const Definition& definition, const AxisValues& axis_values) {
  double total = 0;
  auto add = [&](const TensorSpec& tensor) -> Status {
    if (tensor.is_scalar()) return ok_status();
    double elements = 1;
    for (const auto& axis_name : *tensor.shape) {
      auto it = axis_values.find(axis_name);
      if (it == axis_values.end())
        return make_error("validation", "tensor '{}': no value for axis '{}'", tensor.name,
                          axis_name);
      elements *= static_cast<double>(it->second);
    }
    total += elements * static_cast<double>(dtype_size_bytes(tensor.dtype));
    return ok_status();
  };
  for (const auto& tensor : definition.inputs) PTXB_RETURN_IF_ERROR(add(tensor));
  for (const auto& tensor : definition.outputs) PTXB_RETURN_IF_ERROR(add(tensor));
  return total;
}

Result<CostEstimate> compute_cost(const std::string& model, const Definition& definition,
                                  const AxisValues& axis_values) {
  CostEstimate estimate;
  PTXB_ASSIGN_OR_RETURN(estimate.flops, model_flops(model, axis_values));
  PTXB_ASSIGN_OR_RETURN(estimate.min_bytes, tensor_bytes(definition, axis_values));
  return estimate;
}

}  // namespace ptxb
