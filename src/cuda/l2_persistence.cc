#include "cuda/l2_persistence.h"

#include "cuda/cuda_check.h"

namespace ptxb {
namespace {

// An empty window: num_bytes 0 disables it (cudaAccessPolicyWindow); hit and miss are the
// defaults, so nothing about the stream's accesses is special any more.
cudaStreamAttrValue cleared_window() {
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = nullptr;
  value.accessPolicyWindow.num_bytes = 0;
  value.accessPolicyWindow.hitRatio = 0.0f;
  value.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
  value.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
  return value;
}

}  // namespace

L2ResetOutcome reset_persisting_l2(cudaStream_t stream) {
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return {status, "cudaGetDevice (L2 reset)"};
  int max_persisting = 0;
  status = cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device);
  if (status != cudaSuccess) return {status, "cudaDeviceGetAttribute (L2 reset)"};
  if (max_persisting == 0) return {};  // no set-aside on this device: nothing can persist
  const cudaStreamAttrValue window = cleared_window();
  status = cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window);
  if (status != cudaSuccess) return {status, "cudaStreamSetAttribute(AccessPolicyWindow = 0)"};
  status = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  if (status != cudaSuccess) return {status, "cudaDeviceSetLimit(PersistingL2CacheSize = 0)"};
  status = cudaCtxResetPersistingL2Cache();
  if (status != cudaSuccess) return {status, "cudaCtxResetPersistingL2Cache"};
  return {};
}

Status reset_persisting_l2_or_error(cudaStream_t stream) {
  const L2ResetOutcome outcome = reset_persisting_l2(stream);
  if (outcome.status != cudaSuccess)
    return gpu::cuda_call_error(outcome.status, outcome.call, __FILE__, __LINE__);
  return ok_status();
}

}  // namespace ptxb
