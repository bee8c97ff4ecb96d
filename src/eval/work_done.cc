#include "eval/work_done.h"

#include <fmt/format.h>

#include "core/json_fields.h"

namespace ptxb {
namespace {

std::string gflop(double flops) {
  return fmt::format("{:.1f} GFLOP", flops / 1e9);
}

}  // namespace

Result<WorkDoneRecord> judge_work_done(double required_flops, double min_bytes,
                                       const WorkMeasure& measured, double threshold) {
  if (!(required_flops > 0))
    return make_error("work_done", "the task has no FLOP model to compare the work with");
  WorkDoneRecord r;
  r.required_flops = required_flops;
  r.min_bytes = min_bytes;
  r.tensor_flops = measured.tensor_flops;
  r.fma_flops = measured.fma_flops;
  r.measured_flops = measured.tensor_flops + measured.fma_flops;
  r.dram_bytes = measured.dram_bytes;
  r.threshold = threshold;
  r.fraction = r.measured_flops / required_flops;
  r.insufficient = r.fraction < threshold;
  r.detail = fmt::format(
      "the profiled call executed {} ({} on tensor cores, {} as FMA) against the {} the "
      "problem needs ({:.1f} %; below {:.0f} % means work was skipped)",
      gflop(r.measured_flops), gflop(r.tensor_flops), gflop(r.fma_flops), gflop(required_flops),
      r.fraction * 100, threshold * 100);
  return r;
}

Json WorkDoneRecord::to_json() const {
  return Json{{"required_flops", required_flops},
              {"measured_flops", measured_flops},
              {"tensor_flops", tensor_flops},
              {"fma_flops", fma_flops},
              {"fraction", fraction},
              {"threshold", threshold},
              {"dram_bytes", dram_bytes},
              {"min_bytes", min_bytes},
              {"insufficient", insufficient},
              {"detail", detail}};
}

Result<WorkDoneRecord> WorkDoneRecord::from_json(const Json& json) {
  WorkDoneRecord w;
  FieldReader r(json);
  r.required("required_flops", w.required_flops).required("measured_flops", w.measured_flops);
  r.required("tensor_flops", w.tensor_flops).required("fma_flops", w.fma_flops);
  r.required("fraction", w.fraction).required("threshold", w.threshold);
  r.required("dram_bytes", w.dram_bytes).required("min_bytes", w.min_bytes);
  r.required("insufficient", w.insufficient).required("detail", w.detail);
  PTXB_RETURN_IF_ERROR(r.status());
  return w;
}

}  // namespace ptxb
