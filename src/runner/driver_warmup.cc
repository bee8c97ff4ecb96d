#include "runner/driver_warmup.h"

#include "cuda/cuda_check.h"

namespace ptxb {
namespace {

void CUDART_CB no_op_host_function(void* /*user_data*/) {}

// 1 MiB: large enough that the default pool reserves real memory (small requests may be served
// from a sub-allocation that needs no set-up), small next to any GPU's memory.
constexpr size_t kWarmupAllocationBytes = 1u << 20;

Status warm_graph_with_host_node(cudaStream_t stream, void* scratch) {
  cudaGraph_t graph = nullptr;
  PTXB_CUDA_CHECK(cudaGraphCreate(&graph, 0));
  cudaMemsetParams memset_params{};
  memset_params.dst = scratch;
  memset_params.elementSize = 1;
  memset_params.width = kWarmupAllocationBytes;
  memset_params.height = 1;
  memset_params.value = 0;
  cudaGraphNode_t memset_node = nullptr;
  cudaHostNodeParams host_params{};
  host_params.fn = no_op_host_function;
  cudaGraphNode_t host_node = nullptr;
  cudaGraphExec_t exec = nullptr;
  Status built = [&]() -> Status {
    PTXB_CUDA_CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &memset_params));
    PTXB_CUDA_CHECK(cudaGraphAddHostNode(&host_node, graph, &memset_node, 1, &host_params));
    PTXB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    PTXB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
    return ok_status();
  }();
  if (exec != nullptr) PTXB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  PTXB_CUDA_CHECK(cudaGraphDestroy(graph));
  return built;
}

Status warm_blocking_event(cudaStream_t stream) {
  cudaEvent_t event = nullptr;
  PTXB_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventBlockingSync));
  const cudaError_t recorded = cudaEventRecord(event, stream);
  const cudaError_t waited = recorded == cudaSuccess ? cudaEventSynchronize(event) : recorded;
  PTXB_CUDA_CHECK(cudaEventDestroy(event));
  PTXB_CUDA_CHECK(waited);
  return ok_status();
}

}  // namespace

Status precreate_driver_threads(cudaStream_t stream) {
  PTXB_CUDA_CHECK(cudaLaunchHostFunc(stream, no_op_host_function, nullptr));
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  void* scratch = nullptr;
  PTXB_CUDA_CHECK(cudaMallocAsync(&scratch, kWarmupAllocationBytes, stream));
  Status graph = warm_graph_with_host_node(stream, scratch);
  PTXB_CUDA_CHECK(cudaFreeAsync(scratch, stream));
  PTXB_RETURN_IF_ERROR(graph);
  PTXB_RETURN_IF_ERROR(warm_blocking_event(stream));
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return ok_status();
}

}  // namespace ptxb
