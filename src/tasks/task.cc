#include "tasks/task.h"

#include "abi/signature.h"

namespace ptxb {

const std::vector<std::string>& reference_backend_names() {
  static const std::vector<std::string> names = {"cublaslt_gemm",
                                                 "cudnn_sdpa_fwd",
                                                 "cudnn_sdpa_bwd",
                                                 "flashinfer_gqa_paged_decode",
                                                 "flashinfer_gqa_paged_prefill",
                                                 "flashinfer_gqa_ragged_prefill",
                                                 "plain_cuda"};
  return names;
}

std::string gqa_reference_for(const std::string& cost_model) {
  // The layout decides the ABI the backend unpacks; the mask comes from the cost model's suffix.
  if (cost_model == "gqa_paged_decode") return "flashinfer_gqa_paged_decode";
  if (cost_model == "gqa_paged_prefill_causal") return "flashinfer_gqa_paged_prefill";
  if (cost_model == "gqa_ragged_prefill_causal") return "flashinfer_gqa_ragged_prefill";
  return "";
}

bool is_library_reference(const std::string& backend) {
  return !backend.starts_with("plain_cuda");
}

std::map<std::string, std::int64_t> Task::axis_values() const {
  std::map<std::string, std::int64_t> values;
  for (const auto& axis : definition.axes)
    if (!axis.is_var && axis.value) values[axis.name] = *axis.value;
  for (const auto& [name, value] : workload.axes) values[name] = value;
  return values;
}

std::string Task::workload_name() const {
  std::string out = definition.name;
  for (const auto& axis : definition.axes) {
    if (!axis.is_var) continue;
    for (const auto& [name, value] : workload.axes)
      if (name == axis.name) out += "_" + name + std::to_string(value);
  }
  return out;
}

Json Task::shapes_json() const {
  const auto values = axis_values();
  Json shapes = Json::object();
  auto add = [&](const TensorSpec& tensor) {
    Json dims = Json::array();
    if (tensor.shape)
      for (const auto& axis_name : *tensor.shape) {
        auto it = values.find(axis_name);
        dims.push_back(it == values.end() ? Json(axis_name) : Json(it->second));
      }
    shapes[tensor.name] = dims;
  };
  for (const auto& tensor : definition.inputs) add(tensor);
  for (const auto& tensor : definition.outputs) add(tensor);
  return shapes;
}

Json Task::to_json() const {
  Json out = Json::object();
  out["name"] = name;
  out["suites"] = suites;
  out["arch"] = arch;
  out["target_families"] = target_families;
  out["reference_backend"] = reference_backend;
  out["tolerance"] = {{"atol", tolerance.atol}, {"rtol", tolerance.rtol}};
  out["prompt_variants"] = prompt_variants;
  out["target_speedup"] = target_speedup;
  out["cost_model"] = cost_model;
  out["flops"] = flops;
  out["min_bytes"] = min_bytes;
  out["workload_name"] = workload_name();
  out["source_workload_uuid"] = source_workload_uuid;
  Json axes = Json::object();
  const auto values = axis_values();
  for (const auto& axis : definition.axes) {
    if (auto it = values.find(axis.name); it != values.end()) axes[axis.name] = it->second;
  }
  out["axes"] = axes;
  out["shapes"] = shapes_json();
  out["signature"] = make_run_signature(definition).declaration();
  out["definition"] = definition_to_json(definition);
  out["workload"] = workload_to_json(workload);
  return out;
}

}  // namespace ptxb
