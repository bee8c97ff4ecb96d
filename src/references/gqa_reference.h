// Grouped-query attention over a batch of variable-length requests (the heldout-h100 GQA tasks,
// FlashInfer-Trace layouts): the ABI unpacking shared by every GQA backend.
//
// Three layouts, each with the `run` parameter order its definition produces (design.md §3.2:
// inputs, outputs, axes in definition order, then the stream):
//   paged decode     q[batch,Hq,D], k_cache/v_cache[pages,page_size,Hkv,D], kv_indptr, kv_indices,
//                    sm_scale -> output[batch,Hq,D], lse[batch,Hq];
//                    axes batch_size, Hq, Hkv, D, num_pages, page_size, len_indptr, num_kv_indices
//   paged prefill    q[total_q,Hq,D], k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, sm_scale
//                    -> output[total_q,Hq,D], lse[total_q,Hq];
//                    axes Hq, Hkv, D, page_size, len_indptr, total_q, num_kv_indices, num_pages
//   ragged prefill   q[total_q,Hq,D], k/v[total_kv,Hkv,D], qo_indptr, kv_indptr, sm_scale
//                    -> output, lse; axes Hq, Hkv, D, len_indptr, total_q, total_kv
// Query head h reads KV head h / (Hq/Hkv). Prefill is causal with the bottom-right aligned mask
// (query i of a request with q_len queries and kv_len keys sees keys j <= kv_len - q_len + i);
// decode has one query per request and sees every key. `lse` is base 2 (log2 Σ exp), as
// FlashInfer returns it.
//
// A plan depends on the index arrays' contents (request lengths), not only on the axes, so GQA
// backends plan in prepare_call(): it copies the index arrays to the host once per (shape,
// index-array addresses) and caches the plan. The arrays are workload constants (safetensors),
// exactly what FlashInfer's plan()/run() split assumes: plan once per batch, run many times.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "references/reference.h"

namespace ptxb::gpu {

enum class GqaLayout { kPagedDecode, kPagedPrefill, kRaggedPrefill };

std::string to_string(GqaLayout layout);  // "paged_decode", "paged_prefill", "ragged_prefill"

struct GqaShape {
  GqaLayout layout = GqaLayout::kPagedDecode;
  std::int64_t batch = 0;    // requests: len_indptr - 1
  std::int64_t total_q = 0;  // query rows (decode: batch)
  std::int64_t num_qo_heads = 0, num_kv_heads = 0, head_dim = 0;
  std::int64_t page_size = 1;  // 1 for ragged
  std::int64_t kv_rows = 0;    // num_kv_indices (paged) or total_kv (ragged)
  std::int64_t num_pages = 0;  // paged: rows of k_cache/v_cache; ragged: total_kv
  auto operator<=>(const GqaShape&) const = default;
};

// "paged_prefill Hq=24 Hkv=8 D=128 batch=4 total_q=4096 kv_rows=4096 page_size=1"
std::string to_string(const GqaShape& shape);

// Shape from the axes in signature order (see the file comment); checks positivity, the head
// ratio, len_indptr >= 2 and that decode's len_indptr == batch_size + 1.
Result<GqaShape> gqa_shape_from_axes(GqaLayout layout, std::span<const std::int64_t> axes);

// One call's arguments. Index arrays are device pointers; qo_indptr is null for decode (one
// query per request), kv_indices null for ragged.
struct GqaCall {
  GqaShape shape;
  const __nv_bfloat16* q = nullptr;
  const __nv_bfloat16* k = nullptr;
  const __nv_bfloat16* v = nullptr;
  const std::int32_t* qo_indptr = nullptr;
  const std::int32_t* kv_indptr = nullptr;
  const std::int32_t* kv_indices = nullptr;
  float sm_scale = 0.0f;
  __nv_bfloat16* output = nullptr;
  float* lse = nullptr;
  cudaStream_t stream = nullptr;
};

// The request boundaries copied to the host: what a plan is computed from.
struct GqaHostIndex {
  std::vector<std::int32_t> qo_indptr;  // decode: 0, 1, ..., batch
  std::vector<std::int32_t> kv_indptr;  // in pages (paged) or rows (ragged)
};

// Checks the indptr arrays against the shape: start at 0, non-decreasing, end at total_q /
// kv_rows. A malformed workload fails here, at plan time, with the offending index.
Status validate_host_index(const GqaShape& shape, const GqaHostIndex& index);

// Synchronous copy of the call's indptr arrays (stream-ordered, then the stream is synchronized).
Result<GqaHostIndex> copy_host_index(const GqaCall& call);

class GqaReference : public ReferenceBackend {
 public:
  explicit GqaReference(GqaLayout layout) : layout_(layout) {}
  GqaLayout layout() const { return layout_; }
  ReferenceOp op() const final;
  bool causal() const final { return layout_ != GqaLayout::kPagedDecode; }
  int num_params() const final;
  int num_axes() const final;
  // Axis checks only; a call cannot run before prepare_call() planned its index arrays.
  Status prepare(std::span<const std::int64_t> axes, cudaStream_t stream) final;
  Status prepare_call(void* const* params) final;
  Status invoke(void* const* params) final;

  // Unpacks the ABI parameters (no GPU work).
  Result<GqaCall> unpack(void* const* params) const;

 protected:
  // Builds what this call's index arrays need (once per key; see plan_key()).
  virtual Status plan(const GqaCall& call) = 0;
  virtual bool planned(const GqaCall& call) const = 0;
  // Enqueues the attention; only called after planned(call).
  virtual Status run(const GqaCall& call) = 0;

 private:
  GqaLayout layout_;
};

// What a plan is cached by: the shape and the addresses of the index arrays.
struct GqaPlanKey {
  GqaShape shape;
  const void* qo_indptr = nullptr;
  const void* kv_indptr = nullptr;
  const void* kv_indices = nullptr;
  auto operator<=>(const GqaPlanKey&) const = default;
};
GqaPlanKey plan_key(const GqaCall& call);

}  // namespace ptxb::gpu
