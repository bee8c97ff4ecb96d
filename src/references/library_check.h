// The checking layer of the two libraries behind the references, cuBLASLt and cuDNN, on top of
// cuda/cuda_check.h (same message shape: "<file>:<line>: <call>: <the library's own words>").
// Only the references include it: the untrusted runner must not link either library.
//
//   PTXB_CUBLAS_CHECK(cublasLtMatmul(...));            // cublasStatus_t
//   PTXB_CUDNN_CHECK(cudnnCreate(&handle));            // cudnnStatus_t
//   PTXB_CUDNN_CHECK(graph->validate());               // cudnn_frontend::error_t (duck-typed)
#pragma once

#include <string>
#include <type_traits>

#include <cublasLt.h>
#include <cudnn.h>

#include "cuda/cuda_check.h"

namespace ptxb::gpu {

std::string cublas_error_detail(cublasStatus_t status);
std::string cudnn_error_detail(cudnnStatus_t status);

namespace detail {

// cudnnStatus_t, or any cudnn_frontend::error_t-like object (is_bad(), get_message()). The
// frontend type is matched structurally so that this header stays free of the (heavy,
// nlohmann-bundling) frontend headers.
template <typename T>
bool cudnn_failed(T& result) {
  if constexpr (std::is_same_v<std::decay_t<T>, cudnnStatus_t>) {
    return result != CUDNN_STATUS_SUCCESS;
  } else {
    return result.is_bad();
  }
}

template <typename T>
std::string cudnn_failure_detail(T& result) {
  if constexpr (std::is_same_v<std::decay_t<T>, cudnnStatus_t>) {
    return cudnn_error_detail(result);
  } else {
    // error_t::get_message() is non-const in frontend 1.32, hence the non-const reference.
    return "cudnn_frontend error " + std::to_string(static_cast<int>(result.get_code())) + ": " +
           result.get_message();
  }
}

}  // namespace detail
}  // namespace ptxb::gpu

#define PTXB_CUBLAS_CHECK(expr)                                                                  \
  PTXB_GPU_CHECK_IMPL(cublasStatus_t, expr, ptxb_gpu_result_ != CUBLAS_STATUS_SUCCESS, "cublas", \
                      cublas_error_detail)
#define PTXB_CUDNN_CHECK(expr)                                                                  \
  PTXB_GPU_CHECK_IMPL(auto, expr, ::ptxb::gpu::detail::cudnn_failed(ptxb_gpu_result_), "cudnn", \
                      detail::cudnn_failure_detail)
