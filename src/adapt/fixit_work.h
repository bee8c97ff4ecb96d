// The Fixit work directory (docs/adaptation.md), joined into what each step consumes:
//   WORK/failures.jsonl + mine-manifest.json   `fixit mine`
//   WORK/repairs/ + repairs.jsonl + repaired/   `fixit repair` (repair_loop.h)
//   WORK/rationales.jsonl                       `fixit reason` (rationale.h)
// and the test kernels that `fixit export` keeps out of the training rows.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "adapt/rationale.h"
#include "adapt/sft_record.h"
#include "core/result.h"

namespace ptxb::adapt {

inline constexpr const char* kFailuresFile = "failures.jsonl";
inline constexpr const char* kMineManifestFile = "mine-manifest.json";
inline constexpr const char* kRepairsLog = "repairs.jsonl";
inline constexpr const char* kRationalesLog = "rationales.jsonl";

// Kept repairs, each with its failure and fixed kernel (for `fixit reason`).
Result<std::vector<RationaleItem>> kept_repairs(const std::string& work_dir);
// Kept repairs with a kept rationale, as training examples; `skipped` counts the kept repairs
// left out for want of a rationale.
Result<std::vector<SftExample>> fixit_examples(const std::string& work_dir, int& skipped);
// canonical source hash -> "RUN_DIR/turns/ID/turnN.cu" of every kernel of the run directories.
Result<std::map<std::string, std::string>> test_kernel_hashes(const std::vector<std::string>& runs);

}  // namespace ptxb::adapt
