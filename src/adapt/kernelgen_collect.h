// `ptxbench kernelgen collect`: the KernelGen baseline's sources, correct kernels that really
// execute the task's target instructions, from agent run directories (a teacher's direct
// generation, usually).
//
// A turn is taken when it is committed in RUN_DIR/turns.jsonl with status PASSED, target
// instructions `dynamic_present` (design.md §3.6: the target family ran on the GPU, not merely
// compiled in) and a measured speedup ≥ --min-speedup. A kernel that passes without its target
// instructions would teach the model to dodge the point of the task; an unmeasured speedup
// cannot clear a threshold.
//
// Selection is deterministic: candidates are ordered per task by speedup (highest first), then
// turn, then id; deduplicated by canonical source (source_tokens.h, the first kept); and each
// task takes at most --per-task-cap of them, so one easy task cannot fill the set. Every turn
// looked at is taken or listed as skipped with its reason (collect-manifest.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapt/rationale.h"
#include "adapt/sft_record.h"
#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::adapt {

inline constexpr const char* kKernelsFile = "kernels.jsonl";
inline constexpr const char* kCollectManifestFile = "collect-manifest.json";

struct CollectedKernel {
  std::string id;  // "<trajectory id>__turn<N>"
  std::string run_dir;
  std::string trajectory;
  std::string model;
  std::string task;
  int turn = 0;
  double speedup = 0;
  std::string system_prompt;
  std::string task_message;
  std::string kernel;
  std::string canonical_hash;

  Json to_json() const;
  static Result<CollectedKernel> from_json(const Json& json, const std::string& origin);
};

struct CollectOptions {
  double min_speedup = 1.0;  // the reference's speed: a slower kernel is not worth imitating
  int per_task_cap = 0;      // 0: no cap
};

struct CollectResult {
  std::vector<CollectedKernel> taken;
  Json manifest;  // options, counts, per task, every taken and skipped turn with its reason
};

Result<CollectResult> collect_kernels(const std::vector<std::string>& run_dirs,
                                      const CollectOptions& options);

// WORK/kernels.jsonl as `collect` writes it.
Result<std::vector<CollectedKernel>> read_collected(const std::string& work_dir);
// The rationale items of `kernelgen reason` (no failure before the kernel).
std::vector<RationaleItem> kernelgen_rationale_items(const std::vector<CollectedKernel>& kernels);
// Collected kernels with a kept rationale (WORK/rationales.jsonl) as training examples;
// `without_rationale` counts the others.
Result<std::vector<SftExample>> kernelgen_examples(const std::string& work_dir,
                                                   int& without_rationale);

}  // namespace ptxb::adapt
