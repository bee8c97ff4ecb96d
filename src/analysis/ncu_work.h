// The arithmetic and the DRAM traffic of a profiled call, from the hardware counters Nsight
// Compute collects on its raw page (analysis/ncu_launches.h), for the work-done check
// (eval/work_done.h). The counters are collected in the same profiling run as the
// target-instruction check, so they describe the same call.
//
// Counters (H100/H200, ncu 2025.3; names checked with `ncu --query-metrics --chip gh100`):
//   tensor: the tensor pipe's operations by source and destination type (a multiply-add is two
//     operations, so the count is in FLOPs); summed over every type, so FP8, TF32 and FP16
//     kernels count as much as BF16 ones (only BF16 is required: the others may be absent);
//   FMA: predicated-on FP32 FFMA and FP16 HFMA thread instructions (2 flops each; HFMA2 packs
//     two lanes);
//   DRAM: bytes read and written.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/ncu_launches.h"
#include "core/result.h"

namespace ptxb {

struct WorkMeasure {
  double tensor_flops = 0;  // tensor-pipe operations (2 per multiply-add)
  double fma_flops = 0;     // FMA thread instructions × 2 (× 2 again for packed HFMA2)
  double dram_bytes = 0;    // read + written
};

// A counter and the flops (or bytes) one unit of it stands for. A required counter must be on
// the raw page for every launch; an optional one (a data type the GPU's counters may not name)
// counts as zero when ncu does not report it.
struct WorkCounter {
  std::string_view metric;
  double weight;
  bool required = true;
};

const std::vector<WorkCounter>& tensor_work_counters();
const std::vector<WorkCounter>& fma_work_counters();
const std::vector<WorkCounter>& dram_work_counters();

// Every counter above, comma-separated, for ncu's --metrics.
std::string work_metrics_option();

// Sums the counters over `launches`. Fails, naming the metric and the kernel, when a launch
// lacks a required one: a count that was not collected must not read as zero work.
Result<WorkMeasure> work_from_launches(const std::vector<NcuLaunch>& launches);

}  // namespace ptxb
