// The checking layer of the CUDA runtime, the driver API and CUPTI, for every process that
// runs GPU code: the trusted supervisor, the references and the untrusted runner. The
// library references add cuBLASLt and cuDNN in references/library_check.h, so the runner,
// which must not link those libraries, includes only this header.
//
// Each macro evaluates a call once; on failure it returns, from the enclosing function (which
// returns ptxb::Status or ptxb::Result<T>), an Error whose message is
//   "<file>:<line>: <call as written>: <the API's own error name and string>"
// and whose code names the API ("cuda", "cupti", "cu"). Nothing throws, no
// error is swallowed, and nothing here touches the GPU unless a call fails (the driver error
// strings are looked up lazily, through cudaGetDriverEntryPointByVersion, never through a
// direct libcuda link: CI machines have no driver).
//
//   PTXB_CUDA_CHECK(cudaMalloc(&p, bytes));            // runtime API (cudaError_t)
//   PTXB_CUDA_CHECK(cudaGetLastError());               // after a <<<>>> launch
//   PTXB_CUPTI_CHECK(cuptiActivityFlushAll(0));        // CUptiResult
//   PTXB_CU_CHECK(fn_cuCtxGetCurrent(&ctx));           // CUresult from an entry-point pointer
#pragma once

#include <string>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "core/result.h"

namespace ptxb::gpu {

// "src/runner/x.cc" for a file inside the source tree, else the path as given by __FILE__.
const char* source_relative_path(const char* file);

// Builds "<file>:<line>: <call>: <detail>" with error code `code`.
Error make_call_error(const char* code, const char* file, int line, const char* call,
                      const std::string& detail);

// The API's own name and description of a failure code ("cudaErrorMemoryAllocation: out of
// memory"). The driver variant resolves cuGetErrorName/cuGetErrorString through the runtime's
// entry-point query and falls back to the number if even that fails.
std::string cuda_error_detail(cudaError_t error);
std::string cupti_error_detail(CUptiResult result);
std::string driver_error_detail(CUresult result);

// Resolves a driver API function (e.g. "cuCtxGetCurrent") through the CUDA runtime, with the
// ABI of the toolkit we compile against (CUDA_VERSION). Returns an error naming the symbol when
// the driver lacks it.
Result<void*> driver_entry_point(const char* symbol);

// The error of a failed runtime call whose status the caller needs to inspect first (e.g. the
// runner reports the raw status of a candidate's sticky error before it turns it into an Error).
Error cuda_call_error(cudaError_t error, const char* call, const char* file, int line);

template <typename Fn>
Result<Fn*> driver_function(const char* symbol) {
  PTXB_ASSIGN_OR_RETURN(void* address, driver_entry_point(symbol));
  return reinterpret_cast<Fn*>(address);
}

}  // namespace ptxb::gpu

#define PTXB_GPU_CHECK_IMPL(type, expr, failed, code, detail_fn)                     \
  do {                                                                               \
    type ptxb_gpu_result_ = (expr);                                                  \
    if (failed) {                                                                    \
      return ::ptxb::gpu::make_call_error(code, __FILE__, __LINE__, #expr,           \
                                          ::ptxb::gpu::detail_fn(ptxb_gpu_result_)); \
    }                                                                                \
  } while (0)

#define PTXB_CUDA_CHECK(expr) \
  PTXB_GPU_CHECK_IMPL(cudaError_t, expr, ptxb_gpu_result_ != cudaSuccess, "cuda", cuda_error_detail)
#define PTXB_CUPTI_CHECK(expr)                                                       \
  PTXB_GPU_CHECK_IMPL(CUptiResult, expr, ptxb_gpu_result_ != CUPTI_SUCCESS, "cupti", \
                      cupti_error_detail)
#define PTXB_CU_CHECK(expr) \
  PTXB_GPU_CHECK_IMPL(CUresult, expr, ptxb_gpu_result_ != CUDA_SUCCESS, "cu", driver_error_detail)

// Checks that a kernel launch was accepted (bad configuration, missing image for this GPU).
// Asynchronous faults surface at the next synchronizing call, which is checked like any other.
#define PTXB_CUDA_CHECK_LAUNCH() PTXB_CUDA_CHECK(cudaGetLastError())
