// Which library reference a runner loads (libptxbench_reference.so reads it from
// PTXBENCH_REFERENCE): the backend's name, ":causal" for a masked attention, and optionally
// "@pin=MxNxK:H[;...]": cuBLASLt's heuristic candidate H for each GEMM shape, the choice the
// supervisor's own reference instance made, so that no runner autotunes on its own
// (EvalOptions::pin_reference_algorithm; references/cublaslt_gemm.h CublasLtGemm::pin).
//   "cublaslt_gemm"  "cudnn_sdpa_fwd:causal"  "cublaslt_gemm@pin=8192x7168x5120:3"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct GemmPin {
  std::int64_t m = 0, n = 0, k = 0;
  int heuristic_index = 0;
  bool operator==(const GemmPin&) const = default;
};

struct ReferenceSelector {
  std::string backend;  // "cublaslt_gemm", "cudnn_sdpa_fwd", ...
  bool causal = false;
  std::vector<GemmPin> pins;

  std::string to_string() const;
};

// The line libptxbench_reference.so prints on stderr (the runner's log) once it has prepared,
// followed by its describe() JSON on the same line.
inline constexpr std::string_view kPreparedLinePrefix = "libptxbench_reference: prepared ";

// The description from the last such line of a runner's log; null when there is none or it
// does not parse (the log is the runner's: diagnostic only, never a verdict's input).
Json prepared_description_in_log(const std::string& log);

// Parses a selector; a malformed pin is an error (a runner must not silently autotune instead).
Result<ReferenceSelector> parse_reference_selector(const std::string& text);

// The pins for every shape of a cuBLASLt reference description (CublasLtGemm::describe(): its
// "shapes", each with m, n, k and algorithm.heuristic_index); empty for any other backend or a
// description without them.
std::vector<GemmPin> gemm_pins_of(const Json& backend_description);

}  // namespace ptxb
