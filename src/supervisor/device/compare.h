// Output comparison on the GPU (design.md §3.5), reduced to a small struct copied to the host.
//
// Element rule, as in the reference implementation (flashinfer-bench): an element of candidate
// x fails iff |x − ref| > atol AND |x − ref| > rtol·|ref|. Both sides are widened to double
// before the subtraction, so the rule is decided exactly for bf16/fp32 values (the difference
// of two floats is exact in double unless their exponents differ by more than 29) and the
// boundary |x − ref| == atol (or == rtol·|ref|) passes. Additionally:
//   * a non-finite candidate element fails (NaN would slip through the rule: NaN > t is false);
//   * a non-finite reference element fails too and is counted separately: any such element
//     makes the verdict INVALID_REFERENCE upstream, never PASSED;
//   * an element whose bits equal the poison pattern of this trial is counted (it may be
//     unwritten; UnwrittenTracker intersects two trials with different poisons to decide).
// Error statistics cover the elements where both values are finite:
//   abs error = |x − ref|; rel error = |x − ref| / (|ref| + 1e-8), the epsilon keeping the
//   relative error finite where the reference is exactly zero.
#pragma once

#include <cstdint>
#include <optional>

#include <cuda_runtime_api.h>

#include "core/json_io.h"
#include "core/result.h"
#include "cuda/device_buffer.h"
#include "trace/dtype.h"

namespace ptxb::gpu {

struct CompareOptions {
  double atol = 1e-2;  // design.md §3.5: atol = rtol = 1e-2 for bf16 outputs
  double rtol = 1e-2;
  // Bit pattern of this trial's poison (low 16 bits for a bf16 candidate); nullopt: not counted.
  std::optional<std::uint32_t> poison_bits;
  // Optional second, exact-math reference (fp32, same element order). When set, an element that
  // fails the rule against `reference` still passes if it meets the rule against this one: the
  // library reference is itself a bf16 computation and, for the causal attention backward, is
  // measurably farther from the exact gradients than the tolerance at a few elements (see
  // docs/eval.md "Cross-checked reference"). Error statistics stay relative to `reference`.
  const float* cross_reference = nullptr;
};

struct CompareResult {
  std::int64_t num_elements = 0;
  std::int64_t num_failing = 0;           // rule failures + non-finite elements on either side
  std::int64_t first_failing_index = -1;  // -1 when nothing fails
  double first_failing_candidate = 0.0;   // values at first_failing_index (as float)
  double first_failing_reference = 0.0;
  double max_abs_error = 0.0;  // over elements where both sides are finite
  double max_rel_error = 0.0;
  double matched_ratio = 1.0;  // (num_elements − num_failing) / num_elements
  std::int64_t num_nonfinite_candidate = 0;
  std::int64_t num_nonfinite_reference = 0;
  std::int64_t num_equal_poison = 0;  // candidate elements bitwise equal to the poison
  // Elements that failed against `reference` but met the rule against `cross_reference`.
  std::int64_t num_matched_cross_only = 0;

  // True iff nothing failed (which implies both sides finite everywhere).
  bool passed() const { return num_failing == 0; }
  // {"num_elements", "num_failing", "first_failing": {...} | null, "max_abs_error", ...}.
  Json to_json() const;
};

// Compares `count` elements of `candidate` (bf16 or fp32) with `reference` (bf16 or fp32).
// Enqueues the kernels on `stream`, then waits for that stream and returns the summary.
Result<CompareResult> compare_on_device(const void* candidate, DType candidate_dtype,
                                        const void* reference, DType reference_dtype,
                                        std::int64_t count, const CompareOptions& options,
                                        cudaStream_t stream);

// Tracks, across trials, which output elements may never have been written: an element stays
// marked only while it equals the poison pattern in *every* trial observed (design.md §3.5: with
// two different poisons, a written element cannot match both). Start with create(), call
// observe() after each trial's call with that trial's poison, then count().
class UnwrittenTracker {
 public:
  static Result<UnwrittenTracker> create(std::int64_t count, cudaStream_t stream);

  // Clears the mark of every element of `output` whose bits differ from `poison_bits`
  // (`element_bytes` is 2 or 4). Enqueued on `stream`.
  Status observe(const void* output, int element_bytes, std::uint32_t poison_bits,
                 cudaStream_t stream);

  struct Summary {
    std::int64_t num_unwritten = 0;
    std::int64_t first_unwritten_index = -1;
  };
  // Waits for `stream` and returns how many elements are still marked.
  Result<Summary> count(cudaStream_t stream) const;

  std::int64_t num_elements() const { return count_; }

 private:
  std::int64_t count_ = 0;
  DeviceBuffer bitmap_;   // one bit per element, 1 = equal to the poison in every trial so far
  DeviceBuffer summary_;  // device-side Summary accumulator for count()
};

}  // namespace ptxb::gpu
