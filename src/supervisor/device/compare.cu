// Kernels behind compare.h: the element rule, its reduction, and the unwritten-element bitmap.
#include "supervisor/device/compare.h"

#include <bit>
#include <climits>

#include <cuda_bf16.h>

#include "cuda/cuda_check.h"
#include "cuda/launch.cuh"

namespace ptxb::gpu {
namespace {

constexpr unsigned long long kNoIndex = ULLONG_MAX;

// Device-side accumulator; one per compare_on_device call. Non-negative doubles order like
// their bit patterns read as unsigned integers, so max errors are reduced with an integer
// atomicMax on the bits.
struct CompareAccumulator {
  unsigned long long num_failing;
  unsigned long long num_nonfinite_candidate;
  unsigned long long num_nonfinite_reference;
  unsigned long long num_equal_poison;
  unsigned long long num_matched_cross_only;
  unsigned long long first_failing_index;
  unsigned long long max_abs_error_bits;
  unsigned long long max_rel_error_bits;
  double first_failing_candidate;
  double first_failing_reference;
};

__device__ inline double load_as_double(const float* data, std::int64_t i) {
  return static_cast<double>(data[i]);
}
__device__ inline double load_as_double(const __nv_bfloat16* data, std::int64_t i) {
  return static_cast<double>(__bfloat162float(data[i]));
}
__device__ inline std::uint32_t load_bits(const float* data, std::int64_t i) {
  return __float_as_uint(data[i]);
}
__device__ inline std::uint32_t load_bits(const __nv_bfloat16* data, std::int64_t i) {
  return __bfloat16_as_ushort(data[i]);
}

struct MinOp {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    return a < b ? a : b;
  }
};

__global__ void init_accumulator_kernel(CompareAccumulator* acc) {
  *acc = CompareAccumulator{0, 0, 0, 0, 0, kNoIndex, 0, 0, 0.0, 0.0};
}

template <typename C, typename R>
__global__ void compare_kernel(const C* candidate, const R* reference, std::int64_t count,
                               double atol, double rtol, bool check_poison,
                               std::uint32_t poison_bits, const float* cross,
                               CompareAccumulator* acc) {
  __shared__ unsigned long long scratch[32];
  unsigned long long failing = 0, nonfinite_candidate = 0, nonfinite_reference = 0;
  unsigned long long equal_poison = 0, cross_only = 0, first_failing = kNoIndex;
  double max_abs = 0.0, max_rel = 0.0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    double x = load_as_double(candidate, i);
    double ref = load_as_double(reference, i);
    bool x_finite = isfinite(x);
    bool ref_finite = isfinite(ref);
    bool fails = !x_finite || !ref_finite;
    nonfinite_candidate += !x_finite;
    nonfinite_reference += !ref_finite;
    if (check_poison && load_bits(candidate, i) == poison_bits) ++equal_poison;
    if (x_finite && ref_finite) {
      double abs_error = fabs(x - ref);
      double rel_error = abs_error / (fabs(ref) + 1e-8);
      max_abs = fmax(max_abs, abs_error);
      max_rel = fmax(max_rel, rel_error);
      fails = abs_error > atol && abs_error > rtol * fabs(ref);
      if (fails && cross != nullptr) {
        const double exact = static_cast<double>(cross[i]);
        const double cross_error = fabs(x - exact);
        if (isfinite(exact) && !(cross_error > atol && cross_error > rtol * fabs(exact))) {
          fails = false;
          ++cross_only;
        }
      }
    }
    if (fails) {
      ++failing;
      if (first_failing == kNoIndex) first_failing = static_cast<unsigned long long>(i);
    }
  }
  // Grid-stride order visits a thread's indices in increasing order, so its first failure is
  // its minimum; the block minimum of those is the block's first failure.
  failing = block_reduce(failing, SumOp{}, scratch);
  nonfinite_candidate = block_reduce(nonfinite_candidate, SumOp{}, scratch);
  nonfinite_reference = block_reduce(nonfinite_reference, SumOp{}, scratch);
  equal_poison = block_reduce(equal_poison, SumOp{}, scratch);
  cross_only = block_reduce(cross_only, SumOp{}, scratch);
  first_failing = block_reduce(first_failing, MinOp{}, scratch);
  unsigned long long max_abs_bits = block_reduce(
      static_cast<unsigned long long>(__double_as_longlong(max_abs)), MaxOp{}, scratch);
  unsigned long long max_rel_bits = block_reduce(
      static_cast<unsigned long long>(__double_as_longlong(max_rel)), MaxOp{}, scratch);
  if (threadIdx.x == 0) {
    if (failing) atomicAdd(&acc->num_failing, failing);
    if (nonfinite_candidate) atomicAdd(&acc->num_nonfinite_candidate, nonfinite_candidate);
    if (nonfinite_reference) atomicAdd(&acc->num_nonfinite_reference, nonfinite_reference);
    if (equal_poison) atomicAdd(&acc->num_equal_poison, equal_poison);
    if (cross_only) atomicAdd(&acc->num_matched_cross_only, cross_only);
    if (first_failing != kNoIndex) atomicMin(&acc->first_failing_index, first_failing);
    atomicMax(&acc->max_abs_error_bits, max_abs_bits);
    atomicMax(&acc->max_rel_error_bits, max_rel_bits);
  }
}

template <typename C, typename R>
__global__ void record_first_failure_kernel(const C* candidate, const R* reference,
                                            CompareAccumulator* acc) {
  if (acc->first_failing_index == kNoIndex) return;
  auto i = static_cast<std::int64_t>(acc->first_failing_index);
  acc->first_failing_candidate = load_as_double(candidate, i);
  acc->first_failing_reference = load_as_double(reference, i);
}

template <typename C, typename R>
Status launch_compare(const void* candidate, const void* reference, std::int64_t count,
                      const CompareOptions& options, CompareAccumulator* acc, cudaStream_t stream) {
  const auto* c = static_cast<const C*>(candidate);
  const auto* r = static_cast<const R*>(reference);
  LaunchShape shape = grid_stride_shape(count);
  compare_kernel<<<shape.blocks, shape.threads, 0, stream>>>(
      c, r, count, options.atol, options.rtol, options.poison_bits.has_value(),
      options.poison_bits.value_or(0), options.cross_reference, acc);
  PTXB_CUDA_CHECK_LAUNCH();
  record_first_failure_kernel<<<1, 1, 0, stream>>>(c, r, acc);
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

bool is_comparable(DType dtype) {
  return dtype == DType::kBFloat16 || dtype == DType::kFloat32;
}

// Rounds the poison to the candidate's element width, so a caller passing 0xFFFF7FE5 for a
// bf16 output still matches 0x7FE5.
std::uint32_t poison_for(DType candidate_dtype, std::uint32_t bits) {
  return candidate_dtype == DType::kBFloat16 ? (bits & 0xFFFFu) : bits;
}

Status compare_dispatch(const void* candidate, DType candidate_dtype, const void* reference,
                        DType reference_dtype, std::int64_t count, const CompareOptions& options,
                        CompareAccumulator* acc, cudaStream_t stream) {
  bool c16 = candidate_dtype == DType::kBFloat16;
  bool r16 = reference_dtype == DType::kBFloat16;
  if (c16 && r16) {
    return launch_compare<__nv_bfloat16, __nv_bfloat16>(candidate, reference, count, options, acc,
                                                        stream);
  }
  if (c16) {
    return launch_compare<__nv_bfloat16, float>(candidate, reference, count, options, acc, stream);
  }
  if (r16) {
    return launch_compare<float, __nv_bfloat16>(candidate, reference, count, options, acc, stream);
  }
  return launch_compare<float, float>(candidate, reference, count, options, acc, stream);
}

}  // namespace

Json CompareResult::to_json() const {
  Json first = nullptr;
  if (first_failing_index >= 0) {
    first = Json{{"index", first_failing_index},
                 {"candidate", first_failing_candidate},
                 {"reference", first_failing_reference}};
  }
  return Json{{"num_elements", num_elements},
              {"num_failing", num_failing},
              {"first_failing", first},
              {"max_abs_error", max_abs_error},
              {"max_rel_error", max_rel_error},
              {"matched_ratio", matched_ratio},
              {"num_nonfinite_candidate", num_nonfinite_candidate},
              {"num_nonfinite_reference", num_nonfinite_reference},
              {"num_equal_poison", num_equal_poison},
              {"num_matched_cross_only", num_matched_cross_only}};
}

Result<CompareResult> compare_on_device(const void* candidate, DType candidate_dtype,
                                        const void* reference, DType reference_dtype,
                                        std::int64_t count, const CompareOptions& options,
                                        cudaStream_t stream) {
  if (!is_comparable(candidate_dtype) || !is_comparable(reference_dtype)) {
    return make_error("invalid_argument", "compare: unsupported dtypes {} vs {}",
                      dtype_name(candidate_dtype), dtype_name(reference_dtype));
  }
  if (count < 0) return make_error("invalid_argument", "compare: negative count {}", count);
  CompareResult result;
  result.num_elements = count;
  if (count == 0) return result;

  CompareOptions effective = options;
  if (options.poison_bits)
    effective.poison_bits = poison_for(candidate_dtype, *options.poison_bits);

  // Stream-ordered allocation: no device-wide synchronization, so comparing on one stream
  // never stalls work on another.
  CompareAccumulator* acc = nullptr;
  PTXB_CUDA_CHECK(
      cudaMallocAsync(reinterpret_cast<void**>(&acc), sizeof(CompareAccumulator), stream));
  init_accumulator_kernel<<<1, 1, 0, stream>>>(acc);
  Status launched = [&]() -> Status {
    PTXB_CUDA_CHECK_LAUNCH();
    return compare_dispatch(candidate, candidate_dtype, reference, reference_dtype, count,
                            effective, acc, stream);
  }();
  CompareAccumulator host{};
  if (launched.ok()) {
    PTXB_CUDA_CHECK(cudaMemcpyAsync(&host, acc, sizeof(host), cudaMemcpyDeviceToHost, stream));
  }
  PTXB_CUDA_CHECK(cudaFreeAsync(acc, stream));
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!launched.ok()) return launched.error();

  result.num_failing = static_cast<std::int64_t>(host.num_failing);
  result.num_nonfinite_candidate = static_cast<std::int64_t>(host.num_nonfinite_candidate);
  result.num_nonfinite_reference = static_cast<std::int64_t>(host.num_nonfinite_reference);
  result.num_equal_poison = static_cast<std::int64_t>(host.num_equal_poison);
  result.num_matched_cross_only = static_cast<std::int64_t>(host.num_matched_cross_only);
  if (host.first_failing_index != kNoIndex) {
    result.first_failing_index = static_cast<std::int64_t>(host.first_failing_index);
    result.first_failing_candidate = host.first_failing_candidate;
    result.first_failing_reference = host.first_failing_reference;
  }
  result.max_abs_error = std::bit_cast<double>(host.max_abs_error_bits);
  result.max_rel_error = std::bit_cast<double>(host.max_rel_error_bits);
  result.matched_ratio =
      static_cast<double>(count - result.num_failing) / static_cast<double>(count);
  return result;
}

// ---- UnwrittenTracker ----

namespace {

struct UnwrittenAccumulator {
  unsigned long long num_unwritten;
  unsigned long long first_unwritten_index;
};

// One thread per 32-element word of the bitmap: no atomics, each word has one writer.
template <typename T>
__global__ void observe_kernel(const T* output, std::int64_t count, T poison,
                               std::uint32_t* bitmap) {
  std::int64_t words = (count + 31) / 32;
  for (std::int64_t w = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t marks = bitmap[w];
    if (marks == 0) continue;  // every element of this word already proven written
    std::int64_t base = w * 32;
    for (int b = 0; b < 32 && base + b < count; ++b) {
      if (output[base + b] != poison) marks &= ~(1u << b);
    }
    bitmap[w] = marks;
  }
}

__global__ void count_unwritten_kernel(const std::uint32_t* bitmap, std::int64_t count,
                                       UnwrittenAccumulator* acc) {
  __shared__ unsigned long long scratch[32];
  unsigned long long unwritten = 0, first = kNoIndex;
  std::int64_t words = (count + 31) / 32;
  for (std::int64_t w = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t valid = count - w * 32;  // bits past the end of the tensor are not elements
    std::uint32_t marks = bitmap[w] & (valid >= 32 ? 0xFFFFFFFFu : ((1u << valid) - 1u));
    unwritten += __popc(marks);
    if (marks != 0 && first == kNoIndex) {
      first = static_cast<unsigned long long>(w * 32 + (__ffs(marks) - 1));
    }
  }
  unwritten = block_reduce(unwritten, SumOp{}, scratch);
  first = block_reduce(first, MinOp{}, scratch);
  if (threadIdx.x == 0) {
    if (unwritten) atomicAdd(&acc->num_unwritten, unwritten);
    if (first != kNoIndex) atomicMin(&acc->first_unwritten_index, first);
  }
}

__global__ void init_unwritten_kernel(UnwrittenAccumulator* acc) {
  *acc = UnwrittenAccumulator{0, kNoIndex};
}

}  // namespace

Result<UnwrittenTracker> UnwrittenTracker::create(std::int64_t count, cudaStream_t stream) {
  if (count < 0)
    return make_error("invalid_argument", "UnwrittenTracker: negative count {}", count);
  UnwrittenTracker tracker;
  tracker.count_ = count;
  std::size_t words = static_cast<std::size_t>((count + 31) / 32);
  PTXB_ASSIGN_OR_RETURN(tracker.bitmap_, DeviceBuffer::create(words * sizeof(std::uint32_t)));
  PTXB_ASSIGN_OR_RETURN(tracker.summary_, DeviceBuffer::create(sizeof(UnwrittenAccumulator)));
  // All ones: before any trial, every element is "possibly unwritten".
  if (words > 0) {
    PTXB_CUDA_CHECK(
        cudaMemsetAsync(tracker.bitmap_.data(), 0xFF, words * sizeof(std::uint32_t), stream));
  }
  return Result<UnwrittenTracker>(std::move(tracker));  // explicit: nvcc does not apply P1825
}

Status UnwrittenTracker::observe(const void* output, int element_bytes, std::uint32_t poison_bits,
                                 cudaStream_t stream) {
  if (count_ == 0) return ok_status();
  LaunchShape shape = grid_stride_shape((count_ + 31) / 32);
  auto* bitmap = bitmap_.as<std::uint32_t>();
  if (element_bytes == 2) {
    observe_kernel<<<shape.blocks, shape.threads, 0, stream>>>(
        static_cast<const std::uint16_t*>(output), count_, static_cast<std::uint16_t>(poison_bits),
        bitmap);
  } else if (element_bytes == 4) {
    observe_kernel<<<shape.blocks, shape.threads, 0, stream>>>(
        static_cast<const std::uint32_t*>(output), count_, poison_bits, bitmap);
  } else {
    return make_error("invalid_argument", "UnwrittenTracker: element size {} is not 2 or 4",
                      element_bytes);
  }
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

Result<UnwrittenTracker::Summary> UnwrittenTracker::count(cudaStream_t stream) const {
  Summary summary;
  if (count_ == 0) return summary;
  auto* acc = summary_.as<UnwrittenAccumulator>();
  init_unwritten_kernel<<<1, 1, 0, stream>>>(acc);
  PTXB_CUDA_CHECK_LAUNCH();
  LaunchShape shape = grid_stride_shape((count_ + 31) / 32);
  count_unwritten_kernel<<<shape.blocks, shape.threads, 0, stream>>>(bitmap_.as<std::uint32_t>(),
                                                                     count_, acc);
  PTXB_CUDA_CHECK_LAUNCH();
  UnwrittenAccumulator host{};
  PTXB_CUDA_CHECK(cudaMemcpyAsync(&host, acc, sizeof(host), cudaMemcpyDeviceToHost, stream));
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  summary.num_unwritten = static_cast<std::int64_t>(host.num_unwritten);
  if (host.first_unwritten_index != kNoIndex) {
    summary.first_unwritten_index = static_cast<std::int64_t>(host.first_unwritten_index);
  }
  return summary;
}

}  // namespace ptxb::gpu
