#include "references/flashinfer/flashinfer_gqa.h"

#include "cuda/cuda_check.h"

namespace ptxb::gpu {
namespace {

// FlashInfer's Python wrappers default to a 128 MiB float workspace (split-KV partial outputs)
// and an 8 MiB int workspace (the schedule); the same sizes keep the same plans possible.
constexpr std::size_t kFloatWorkspaceBytes = std::size_t{128} << 20;
constexpr std::size_t kIntWorkspaceBytes = std::size_t{8} << 20;

}  // namespace

FlashInferGqa::~FlashInferGqa() {
  // Teardown is best effort: errors here cannot change any measured result.
  for (auto& [key, planned] : plans_) release(planned);
  cudaFree(float_buffer_);
  cudaFreeHost(pinned_int_buffer_);
}

Status FlashInferGqa::allocate_shared() {
  if (float_buffer_ == nullptr) PTXB_CUDA_CHECK(cudaMalloc(&float_buffer_, kFloatWorkspaceBytes));
  // Pinned: plan() stages the schedule here and copies it with cudaMemcpyAsync.
  if (pinned_int_buffer_ == nullptr)
    PTXB_CUDA_CHECK(cudaMallocHost(&pinned_int_buffer_, kIntWorkspaceBytes));
  return ok_status();
}

void FlashInferGqa::release(Planned& planned) {
  cudaFree(planned.workspace.int_buffer);
  if (auto* decode = std::get_if<flashinfer_ref::DecodePlan>(&planned.plan))
    cudaFree(decode->last_page_len);
}

bool FlashInferGqa::planned(const GqaCall& call) const {
  return plans_.contains(plan_key(call));
}

Status FlashInferGqa::plan(const GqaCall& call) {
  if (call.shape.head_dim != flashinfer_ref::kHeadDim)
    return make_error("unsupported",
                      "{}: FlashInfer kernels are instantiated for head_dim {} only, not {}",
                      name(), flashinfer_ref::kHeadDim, call.shape.head_dim);
  PTXB_ASSIGN_OR_RETURN(GqaHostIndex index, copy_host_index(call));
  PTXB_RETURN_IF_ERROR(allocate_shared());
  Planned planned;
  planned.workspace = {float_buffer_, kFloatWorkspaceBytes, nullptr, pinned_int_buffer_,
                       kIntWorkspaceBytes};
  Status done = ok_status();
  if (cudaError_t e = cudaMalloc(&planned.workspace.int_buffer, kIntWorkspaceBytes);
      e != cudaSuccess)
    done = make_error("cuda", "{}: cudaMalloc of the int workspace: {}", name(),
                      cudaGetErrorString(e));
  if (done.ok()) {
    if (layout() == GqaLayout::kPagedDecode) {
      flashinfer_ref::DecodePlan decode;
      done = flashinfer_ref::plan_decode(planned.workspace, call, index, decode);
      planned.plan = decode;
    } else {
      flashinfer_ref::PrefillPlan prefill;
      done = flashinfer_ref::plan_prefill(planned.workspace, call, index, prefill);
      planned.plan = prefill;
    }
  }
  if (!done.ok()) {
    release(planned);
    return done;
  }
  plans_.emplace(plan_key(call), std::move(planned));
  return ok_status();
}

Status FlashInferGqa::run(const GqaCall& call) {
  const Planned& planned = plans_.at(plan_key(call));
  if (const auto* decode = std::get_if<flashinfer_ref::DecodePlan>(&planned.plan))
    return flashinfer_ref::run_decode(planned.workspace, *decode, call);
  const auto& prefill = std::get<flashinfer_ref::PrefillPlan>(planned.plan);
  if (layout() == GqaLayout::kRaggedPrefill)
    return flashinfer_ref::run_ragged_prefill(planned.workspace, prefill, call);
  return flashinfer_ref::run_paged_prefill(planned.workspace, prefill, call);
}

Json describe_plan(const flashinfer_ref::DecodePlan& plan) {
  return Json{{"kernel", "BatchDecodeWithPagedKVCacheKernel (CUDA cores, use_tensor_cores=False)"},
              {"split_kv", plan.split_kv},
              {"padded_batch_size", plan.padded_batch_size},
              {"group_size", plan.group_size},
              {"block", {plan.block_x, plan.block_y, plan.block_z}},
              {"vec_size", plan.vec_size},
              {"smem_stages", plan.smem_stages},
              {"plan_info", plan.info}};
}

Json describe_plan(const flashinfer_ref::PrefillPlan& plan, GqaLayout layout) {
  const bool ragged = layout == GqaLayout::kRaggedPrefill;
  return Json{
      {"kernel", ragged ? "PrefillWithKVCacheKernel (SM90 FA3, ragged KV)"
                        : "PrefillWithKVCacheKernel (SM90 FA3, paged KV, sparse mainloop)"},
      {"mask", "causal (bottom-right aligned)"},
      {"cta_tile_q", plan.cta_q},
      {"cta_tile_kv", plan.cta_kv},
      {"stages", plan.stages},
      {"kv_load", plan.tma_kv_load ? "TMA" : "cp.async gather"},
      {"scheduler", plan.same_schedule_for_all_heads ? "BatchPrefillTileScheduler"
                                                     : "BatchPrefillPersistentTileScheduler"},
      {"same_schedule_for_all_heads", plan.same_schedule_for_all_heads},
      {"persistent_ctas", plan.persistent_ctas},
      {"work_tiles", plan.total_work_tiles},
      {"plan_info", plan.info}};
}

Json FlashInferGqa::describe() const {
  Json shapes = Json::array();
  for (const auto& [key, planned] : plans_) {
    Json plan = std::holds_alternative<flashinfer_ref::DecodePlan>(planned.plan)
                    ? describe_plan(std::get<flashinfer_ref::DecodePlan>(planned.plan))
                    : describe_plan(std::get<flashinfer_ref::PrefillPlan>(planned.plan), layout());
    shapes.push_back(Json{{"shape", to_string(key.shape)}, {"plan", plan}});
  }
  return Json{{"backend", name()},
              {"causal", causal()},
              {"library", flashinfer_ref::library_description()},
              {"shapes", shapes}};
}

}  // namespace ptxb::gpu
