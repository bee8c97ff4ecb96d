// Error strings for the checking macros of cuda_check.h.
#include "gpu/cuda_check.h"

#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace ptxb::gpu {

const char* source_relative_path(const char* file) {
  // PTXB_SOURCE_DIR is the absolute project root (compile definition of ptxbench_core); error
  // messages read better as "src/gpu/x.cc:12" than with a build-machine path in front.
  constexpr std::string_view kRoot = PTXB_SOURCE_DIR "/";
  if (std::strncmp(file, kRoot.data(), kRoot.size()) == 0) return file + kRoot.size();
  return file;
}

Error make_call_error(const char* code, const char* file, int line, const char* call,
                      const std::string& detail) {
  return Error{fmt::format("{}:{}: {}: {}", source_relative_path(file), line, call, detail), code};
}

std::string cuda_error_detail(cudaError_t error) {
  return fmt::format("{}: {}", cudaGetErrorName(error), cudaGetErrorString(error));
}

std::string cublas_error_detail(cublasStatus_t status) {
  return fmt::format("{}: {}", cublasLtGetStatusName(status), cublasLtGetStatusString(status));
}

std::string cudnn_error_detail(cudnnStatus_t status) {
  // cuDNN 9 keeps a per-thread message with the reason (e.g. which attribute was rejected);
  // it is more useful than the status name alone.
  char last[1024] = {};
  cudnnGetLastErrorString(last, sizeof(last));
  std::string detail = cudnnGetErrorString(status);
  if (last[0] != '\0') detail += fmt::format(" ({})", last);
  return detail;
}

std::string cupti_error_detail(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return fmt::format("CUptiResult {}", static_cast<int>(result));
  }
  return text;
}

Result<void*> driver_entry_point(const char* symbol) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  // The runtime hands out the version of the symbol whose ABI matches CUDA_VERSION, the
  // toolkit these prototypes (cuda.h) come from.
  cudaError_t error =
      cudaGetDriverEntryPointByVersion(symbol, &address, CUDA_VERSION, cudaEnableDefault, &query);
  if (error != cudaSuccess) {
    return make_error("cu", "cudaGetDriverEntryPointByVersion({}): {}", symbol,
                      cuda_error_detail(error));
  }
  if (query != cudaDriverEntryPointSuccess || address == nullptr) {
    return make_error("cu", "driver entry point {} not available (query result {})", symbol,
                      static_cast<int>(query));
  }
  return address;
}

std::string driver_error_detail(CUresult result) {
  using GetErrorText = CUresult(CUresult, const char**);
  std::string number = fmt::format("CUresult {}", static_cast<int>(result));
  auto get_name = driver_function<GetErrorText>("cuGetErrorName");
  auto get_string = driver_function<GetErrorText>("cuGetErrorString");
  if (!get_name.ok() || !get_string.ok()) return number;
  const char* name = nullptr;
  const char* text = nullptr;
  if ((*get_name)(result, &name) != CUDA_SUCCESS || name == nullptr) return number;
  if ((*get_string)(result, &text) != CUDA_SUCCESS || text == nullptr) return name;
  return fmt::format("{}: {}", name, text);
}

}  // namespace ptxb::gpu
