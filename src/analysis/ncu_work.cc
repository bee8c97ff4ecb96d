#include "analysis/ncu_work.h"

#include "core/strings.h"

namespace ptxb {
namespace {

// Sum of weight × value over `counters` for one launch; the first missing metric is an error.
Result<double> weighted_sum(const NcuLaunch& launch, const std::vector<WorkCounter>& counters) {
  double total = 0;
  for (const WorkCounter& counter : counters) {
    const auto found = launch.metrics.find(std::string(counter.metric));
    if (found == launch.metrics.end() && !counter.required) continue;
    if (found == launch.metrics.end())
      return make_error("parse", "the profile has no {} for kernel {}", counter.metric,
                        launch.name);
    total += counter.weight * found->second;
  }
  return total;
}

}  // namespace

// The tensor-pipe counters count operations, a multiply-add being two: measured on the H200
// (2026-12-02) a cuBLAS BF16 GEMM 8192x7168x5120 and our expert GEMM read 2·M·N·K, so weight 1.
// FFMA counts thread instructions (2^24 threads × 200 FFMA read 3,355,443,200), so weight 2.
const std::vector<WorkCounter>& tensor_work_counters() {
  static const std::vector<WorkCounter> counters = {
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1.0, true},
      {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 1.0, false},
      {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", 1.0, false},
      {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", 1.0, false},
      {"sm__ops_path_tensor_src_fp8_dst_fp32.sum", 1.0, false},
  };
  return counters;
}

const std::vector<WorkCounter>& fma_work_counters() {
  static const std::vector<WorkCounter> counters = {
      {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2.0, true},
      {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 4.0, false},
  };
  return counters;
}

const std::vector<WorkCounter>& dram_work_counters() {
  static const std::vector<WorkCounter> counters = {
      {"dram__bytes_read.sum", 1.0},
      {"dram__bytes_write.sum", 1.0},
  };
  return counters;
}

std::string work_metrics_option() {
  std::vector<std::string> names;
  for (const auto* list : {&tensor_work_counters(), &fma_work_counters(), &dram_work_counters()})
    for (const WorkCounter& counter : *list) names.emplace_back(counter.metric);
  return join(names, ",");
}

Result<WorkMeasure> work_from_launches(const std::vector<NcuLaunch>& launches) {
  WorkMeasure measure;
  for (const NcuLaunch& launch : launches) {
    PTXB_ASSIGN_OR_RETURN(const double tensor, weighted_sum(launch, tensor_work_counters()));
    PTXB_ASSIGN_OR_RETURN(const double fma, weighted_sum(launch, fma_work_counters()));
    PTXB_ASSIGN_OR_RETURN(const double dram, weighted_sum(launch, dram_work_counters()));
    measure.tensor_flops += tensor;
    measure.fma_flops += fma;
    measure.dram_bytes += dram;
  }
  return measure;
}

}  // namespace ptxb
