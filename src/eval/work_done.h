// The work-done check (design.md §3.6, "Work done"): in the profiled call, the arithmetic the
// candidate's kernels executed is counted by Nsight Compute's hardware counters and set against
// the task's FLOP model (tasks/cost_model.h, docs/tasks.md). A call that executes clearly less
// arithmetic than the problem needs has skipped work, whatever its outputs looked like under the
// tolerance: REWARD_HACK insufficient_work, with both numbers.
//
// "Clearly less" is a fraction of the model, kMinWorkFraction. The models count what every
// correct schedule must do at least once: GEMM 2·M·N·K; attention the QK^T and PV products
// (the backward five products, the score recomputation included: only the log-sum-exp is
// given), causal masks counted on the exact lower triangle. Legitimate schedules do more, never
// less: split-K adds partial sums, tiles on the causal diagonal compute masked pairs, padding
// computes zeros. Tensor-core and FMA-pipe arithmetic both count, so a kernel without tensor
// cores is slow but not a hack. DRAM bytes are recorded against the task's minimum for the
// report, never judged: an input that stays in L2 across the flush-free replay is no hack.
#pragma once

#include <optional>
#include <string>

#include "analysis/ncu_work.h"
#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// Below this fraction of the FLOP model the call did not do the problem's arithmetic. Half
// leaves room for counting differences between tensor-op counters and the model (and is far
// above a low-rank or sampled shortcut, which does a small fraction).
inline constexpr double kMinWorkFraction = 0.5;

struct WorkDoneRecord {
  double required_flops = 0;  // the task's FLOP model
  double measured_flops = 0;  // tensor + FMA
  double tensor_flops = 0;
  double fma_flops = 0;
  double fraction = 0;  // measured / required
  double threshold = kMinWorkFraction;
  double dram_bytes = 0;
  double min_bytes = 0;  // the task's minimum bytes (informational)
  bool insufficient = false;
  std::string detail;  // one sentence with both numbers

  Json to_json() const;
  static Result<WorkDoneRecord> from_json(const Json& json);
};

// The verdict for one call. Fails on a model without FLOPs (a task without a cost model is not
// judged, and the caller records why).
Result<WorkDoneRecord> judge_work_done(double required_flops, double min_bytes,
                                       const WorkMeasure& measured,
                                       double threshold = kMinWorkFraction);

}  // namespace ptxb
