// The runner's integrity mechanisms that need a GPU but not a runner process: the driver warm-up
// that lets the thread census be sealed (runner/driver_warmup.h) and the L2 state reset before
// every call (cuda/l2_persistence.h). In-process, without CUPTI (the runner adds CUPTI's threads
// before its warm-up; they are trusted the same way).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "cuda/cuda_check.h"
#include "cuda/l2_persistence.h"
#include "runner/driver_warmup.h"
#include "runner/process_census.h"
#include "test_macros.h"

namespace ptxb {
namespace {

void CUDART_CB no_op(void* /*user_data*/) {}

Status use_lazily_started_features(cudaStream_t stream) {
  cudaStream_t other = nullptr;
  PTXB_CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  PTXB_CUDA_CHECK(cudaLaunchHostFunc(stream, no_op, nullptr));
  PTXB_CUDA_CHECK(cudaLaunchHostFunc(other, no_op, nullptr));
  void* scratch = nullptr;
  PTXB_CUDA_CHECK(cudaMallocAsync(&scratch, 4u << 20, other));
  PTXB_CUDA_CHECK(cudaMemsetAsync(scratch, 0, 4u << 20, other));
  PTXB_CUDA_CHECK(cudaFreeAsync(scratch, other));
  cudaGraph_t graph = nullptr;
  PTXB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  PTXB_CUDA_CHECK(cudaLaunchHostFunc(stream, no_op, nullptr));
  PTXB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  PTXB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  PTXB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  cudaEvent_t event = nullptr;
  PTXB_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventBlockingSync));
  PTXB_CUDA_CHECK(cudaEventRecord(event, stream));
  PTXB_CUDA_CHECK(cudaEventSynchronize(event));
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  PTXB_CUDA_CHECK(cudaEventDestroy(event));
  PTXB_CUDA_CHECK(cudaGraphExecDestroy(exec));
  PTXB_CUDA_CHECK(cudaGraphDestroy(graph));
  PTXB_CUDA_CHECK(cudaStreamDestroy(other));
  return ok_status();
}

// What a legitimate candidate may use inside a call must not start a thread the census has not
// trusted: otherwise host_func and friends would be false leftover_threads. Prints every thread
// that does appear, so a new driver's lazily started thread can be added to the warm-up.
TEST(RunnerIntegrityGpu, NoDriverThreadStartsAfterTheWarmup) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const std::vector<TaskEntry> before_warmup = list_threads();
  ASSERT_OK(precreate_driver_threads(stream));
  ThreadCensus census;
  census.seal(list_threads());
  for (const auto& t : census.untrusted_alive(list_threads())) ADD_FAILURE() << t.name;
  ThreadCensus before;
  before.seal(before_warmup);
  for (const auto& t : before.untrusted_alive(list_threads()))
    std::cout << "thread started by the warm-up: " << t.id << " " << t.name << "\n";
  ASSERT_OK(use_lazily_started_features(stream));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the runner's grace
  const auto late = census.untrusted_alive(list_threads());
  for (const auto& t : late)
    std::cout << "thread started after the warm-up: " << t.id << " " << t.name << "\n";
  EXPECT_TRUE(late.empty()) << late.size() << " driver thread(s) the warm-up does not pre-create";
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(RunnerIntegrityGpu, L2StateIsResetBeforeEveryCall) {
  int device = 0, max_persisting = 0, max_window = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device),
            cudaSuccess);
  if (max_persisting == 0) GTEST_SKIP() << "no persisting L2 on this device";
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  void* data = nullptr;
  ASSERT_EQ(cudaMalloc(&data, 1u << 20), cudaSuccess);
  // What persisting_l2.cu does.
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, max_persisting), cudaSuccess);
  cudaStreamAttrValue window{};
  window.accessPolicyWindow.base_ptr = data;
  window.accessPolicyWindow.num_bytes = std::min<size_t>(1u << 20, max_window);
  window.accessPolicyWindow.hitRatio = 1.0f;
  window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  ASSERT_EQ(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window),
            cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(data, 1, 1u << 20, stream), cudaSuccess);  // lines now persisting
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);

  ASSERT_OK(reset_persisting_l2_or_error(stream));
  size_t limit = 1;
  ASSERT_EQ(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize), cudaSuccess);
  EXPECT_EQ(limit, 0u);
  cudaStreamAttrValue after{};
  ASSERT_EQ(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &after),
            cudaSuccess);
  EXPECT_EQ(after.accessPolicyWindow.num_bytes, 0u);
  ASSERT_OK(reset_persisting_l2_or_error(stream));  // idempotent
  ASSERT_EQ(cudaFree(data), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace ptxb
