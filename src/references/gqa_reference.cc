// GQA ABI unpacking and index-array checks shared by the FlashInfer and plain CUDA backends.
#include "references/gqa_reference.h"

#include <fmt/format.h>

#include "cuda/cuda_check.h"

namespace ptxb::gpu {
namespace {

template <typename T>
T param(void* const* params, int index) {
  return *static_cast<const T*>(params[index]);
}

// Tensor inputs before the scalar sm_scale: decode q, k, v, kv_indptr, kv_indices; paged prefill
// adds qo_indptr; ragged has no kv_indices.
int tensor_inputs(GqaLayout layout) {
  return layout == GqaLayout::kPagedPrefill ? 6 : 5;
}

int axis_count(GqaLayout layout) {
  return layout == GqaLayout::kRaggedPrefill ? 6 : 8;
}

Status check_indptr(const std::vector<std::int32_t>& indptr, std::int64_t expected_size,
                    std::int64_t expected_last, const char* what) {
  if (static_cast<std::int64_t>(indptr.size()) != expected_size)
    return make_error("invalid_argument", "{}: {} entries, expected {}", what, indptr.size(),
                      expected_size);
  if (indptr.front() != 0)
    return make_error("invalid_argument", "{}[0] = {}, expected 0", what, indptr.front());
  for (std::size_t i = 1; i < indptr.size(); ++i)
    if (indptr[i] < indptr[i - 1])
      return make_error("invalid_argument", "{} decreases at {}: {} < {}", what, i, indptr[i],
                        indptr[i - 1]);
  if (indptr.back() != expected_last)
    return make_error("invalid_argument", "{}[-1] = {}, expected {}", what, indptr.back(),
                      expected_last);
  return ok_status();
}

}  // namespace

std::string to_string(GqaLayout layout) {
  switch (layout) {
    case GqaLayout::kPagedDecode:
      return "paged_decode";
    case GqaLayout::kPagedPrefill:
      return "paged_prefill";
    case GqaLayout::kRaggedPrefill:
      return "ragged_prefill";
  }
  return "unknown";
}

std::string to_string(const GqaShape& s) {
  return fmt::format("{} Hq={} Hkv={} D={} batch={} total_q={} kv_rows={} page_size={}",
                     to_string(s.layout), s.num_qo_heads, s.num_kv_heads, s.head_dim, s.batch,
                     s.total_q, s.kv_rows, s.page_size);
}

Result<GqaShape> gqa_shape_from_axes(GqaLayout layout, std::span<const std::int64_t> axes) {
  if (static_cast<int>(axes.size()) != axis_count(layout))
    return make_error("invalid_argument", "GQA {}: expected {} axes, got {}", to_string(layout),
                      axis_count(layout), axes.size());
  GqaShape s;
  s.layout = layout;
  std::int64_t len_indptr = 0;
  switch (layout) {
    case GqaLayout::kPagedDecode:  // batch, Hq, Hkv, D, num_pages, page_size, len_indptr, nnz
      s.batch = axes[0], s.num_qo_heads = axes[1], s.num_kv_heads = axes[2], s.head_dim = axes[3];
      s.num_pages = axes[4], s.page_size = axes[5], len_indptr = axes[6], s.kv_rows = axes[7];
      s.total_q = s.batch;
      if (len_indptr != s.batch + 1)
        return make_error("invalid_argument", "GQA decode: len_indptr {} != batch_size {} + 1",
                          len_indptr, s.batch);
      break;
    case GqaLayout::kPagedPrefill:  // Hq, Hkv, D, page_size, len_indptr, total_q, nnz, pages
      s.num_qo_heads = axes[0], s.num_kv_heads = axes[1], s.head_dim = axes[2];
      s.page_size = axes[3], len_indptr = axes[4], s.total_q = axes[5], s.kv_rows = axes[6];
      s.num_pages = axes[7];
      s.batch = len_indptr - 1;
      break;
    case GqaLayout::kRaggedPrefill:  // Hq, Hkv, D, len_indptr, total_q, total_kv
      s.num_qo_heads = axes[0], s.num_kv_heads = axes[1], s.head_dim = axes[2];
      len_indptr = axes[3], s.total_q = axes[4], s.kv_rows = axes[5], s.num_pages = axes[5];
      s.batch = len_indptr - 1;
      break;
  }
  for (std::int64_t value : {s.batch, s.total_q, s.num_qo_heads, s.num_kv_heads, s.head_dim,
                             s.page_size, s.kv_rows, s.num_pages})
    if (value <= 0)
      return make_error("invalid_argument", "GQA shape {}: every axis must be positive",
                        to_string(s));
  if (s.num_qo_heads % s.num_kv_heads != 0)
    return make_error("invalid_argument", "GQA shape {}: Hq is not a multiple of Hkv",
                      to_string(s));
  // Element indices of the largest tensor stay far inside int32 offsets times the head width.
  if (s.total_q * s.num_qo_heads * s.head_dim >= (std::int64_t{1} << 40) ||
      s.num_pages * s.page_size * s.num_kv_heads * s.head_dim >= (std::int64_t{1} << 40))
    return make_error("invalid_argument", "GQA shape {}: tensors too large", to_string(s));
  return s;
}

Status validate_host_index(const GqaShape& shape, const GqaHostIndex& index) {
  PTXB_RETURN_IF_ERROR(check_indptr(index.qo_indptr, shape.batch + 1, shape.total_q, "qo_indptr"));
  return check_indptr(index.kv_indptr, shape.batch + 1, shape.kv_rows, "kv_indptr");
}

Result<GqaHostIndex> copy_host_index(const GqaCall& call) {
  const std::size_t entries = static_cast<std::size_t>(call.shape.batch + 1);
  GqaHostIndex index;
  index.kv_indptr.resize(entries);
  PTXB_CUDA_CHECK(cudaMemcpyAsync(index.kv_indptr.data(), call.kv_indptr,
                                  entries * sizeof(std::int32_t), cudaMemcpyDeviceToHost,
                                  call.stream));
  if (call.qo_indptr != nullptr) {
    index.qo_indptr.resize(entries);
    PTXB_CUDA_CHECK(cudaMemcpyAsync(index.qo_indptr.data(), call.qo_indptr,
                                    entries * sizeof(std::int32_t), cudaMemcpyDeviceToHost,
                                    call.stream));
  } else {
    for (std::size_t b = 0; b < entries; ++b)
      index.qo_indptr.push_back(static_cast<std::int32_t>(b));
  }
  PTXB_CUDA_CHECK(cudaStreamSynchronize(call.stream));
  PTXB_RETURN_IF_ERROR(validate_host_index(call.shape, index));
  return index;
}

GqaPlanKey plan_key(const GqaCall& call) {
  return GqaPlanKey{call.shape, call.qo_indptr, call.kv_indptr, call.kv_indices};
}

ReferenceOp GqaReference::op() const {
  switch (layout_) {
    case GqaLayout::kPagedDecode:
      return ReferenceOp::kGqaPagedDecode;
    case GqaLayout::kPagedPrefill:
      return ReferenceOp::kGqaPagedPrefill;
    case GqaLayout::kRaggedPrefill:
      return ReferenceOp::kGqaRaggedPrefill;
  }
  return ReferenceOp::kGqaPagedDecode;
}

// Tensor inputs, sm_scale, output, lse, the axes, the stream.
int GqaReference::num_params() const {
  return tensor_inputs(layout_) + 3 + num_axes() + 1;
}

int GqaReference::num_axes() const {
  return axis_count(layout_);
}

Status GqaReference::prepare(std::span<const std::int64_t> axes, cudaStream_t) {
  auto shape = gqa_shape_from_axes(layout_, axes);
  if (!shape.ok()) return shape.error().with_context(name());
  return ok_status();
}

Result<GqaCall> GqaReference::unpack(void* const* params) const {
  const int first_axis = num_params() - num_axes() - 1;
  std::vector<std::int64_t> axes;
  for (int i = 0; i < num_axes(); ++i) axes.push_back(param<std::int64_t>(params, first_axis + i));
  GqaCall call;
  PTXB_ASSIGN_OR_RETURN(call.shape, gqa_shape_from_axes(layout_, axes));
  call.q = param<const __nv_bfloat16*>(params, 0);
  call.k = param<const __nv_bfloat16*>(params, 1);
  call.v = param<const __nv_bfloat16*>(params, 2);
  int next = 3;
  if (layout_ != GqaLayout::kPagedDecode)
    call.qo_indptr = param<const std::int32_t*>(params, next++);
  call.kv_indptr = param<const std::int32_t*>(params, next++);
  if (layout_ != GqaLayout::kRaggedPrefill)
    call.kv_indices = param<const std::int32_t*>(params, next++);
  call.sm_scale = param<float>(params, next++);
  call.output = param<__nv_bfloat16*>(params, next++);
  call.lse = param<float*>(params, next++);
  call.stream = param<cudaStream_t>(params, num_params() - 1);
  return call;
}

Status GqaReference::prepare_call(void* const* params) {
  PTXB_ASSIGN_OR_RETURN(GqaCall call, unpack(params));
  if (planned(call)) return ok_status();
  Status planned_now = plan(call);
  if (!planned_now.ok())
    return planned_now.error().with_context(
        fmt::format("{}: plan for {}", name(), to_string(call.shape)));
  return ok_status();
}

Status GqaReference::invoke(void* const* params) {
  PTXB_ASSIGN_OR_RETURN(GqaCall call, unpack(params));
  if (!planned(call))
    return make_error("not_prepared",
                      "{}: no plan for {} with these index arrays; call prepare_call() first",
                      name(), to_string(call.shape));
  return run(call);
}

}  // namespace ptxb::gpu
